//! Adds up executions, page by page, into the tool's structured output.

use std::collections::BTreeMap;

use kadu::json::Value;

use crate::money;
use crate::period::{rfc3339, Period};

/// The most expensive execution seen so far.
struct Costliest {
    execution_id: String,
    task_id: String,
    cost_cents: i64,
    currency: String,
}

#[derive(Default)]
struct TaskRow {
    executions: u64,
    cost_cents: i64,
}

/// The running totals of a summary. Only ids, statuses and costs are read
/// from an execution: its input and output are data the summary never
/// needs.
#[derive(Default)]
pub struct Summary {
    executions: u64,
    totals: BTreeMap<String, i64>,
    by_status: BTreeMap<String, u64>,
    by_task: BTreeMap<String, TaskRow>,
    costliest: Option<Costliest>,
}

impl Summary {
    /// Adds the executions of one page (`data` of GET /api/v1/executions).
    pub fn add_page(&mut self, data: &[Value]) {
        for e in data {
            let id = e["id"].as_str().unwrap_or_default();
            let task_id = e["task_id"].as_str().unwrap_or_default();
            let status = e["status"].as_str().unwrap_or("unknown");
            let cents = e["cost"]["amount_cents"].as_i64().unwrap_or(0);
            let currency = e["cost"]["currency"].as_str().unwrap_or("BRL");

            self.executions += 1;
            *self.totals.entry(currency.to_owned()).or_insert(0) += cents;
            *self.by_status.entry(status.to_owned()).or_insert(0) += 1;
            let row = self.by_task.entry(task_id.to_owned()).or_default();
            row.executions += 1;
            row.cost_cents += cents;
            let costlier = match &self.costliest {
                None => true,
                Some(c) => {
                    cents > c.cost_cents || (cents == c.cost_cents && id < c.execution_id.as_str())
                }
            };
            if costlier {
                self.costliest = Some(Costliest {
                    execution_id: id.to_owned(),
                    task_id: task_id.to_owned(),
                    cost_cents: cents,
                    currency: currency.to_owned(),
                });
            }
        }
    }

    /// The structured content. `task` is the task the caller filtered on
    /// and its name from the API, which only that row carries.
    pub fn to_json(&self, period: Period, task: Option<(&str, &str)>, truncated: bool) -> Value {
        let mut rows: Vec<(&String, &TaskRow)> = self.by_task.iter().collect();
        rows.sort_by(|a, b| {
            b.1.cost_cents
                .cmp(&a.1.cost_cents)
                .then_with(|| a.0.cmp(b.0))
        });
        let by_task: Vec<Value> = rows
            .into_iter()
            .map(|(id, row)| {
                let mut v = kadu::json!({"task_id": id});
                if let Some((_, name)) = task.filter(|(tid, _)| tid == id) {
                    v.insert("task_name", name);
                }
                v.insert("executions", row.executions);
                v.insert("cost_cents", row.cost_cents);
                v
            })
            .collect();
        let most_expensive = match &self.costliest {
            Some(c) => kadu::json!({
                "execution_id": (c.execution_id.as_str()),
                "task_id": (c.task_id.as_str()),
                "cost_cents": (c.cost_cents),
                "currency": (c.currency.as_str()),
            }),
            None => Value::Null,
        };
        kadu::json!({
            "period": {"days": (period.days), "from": (rfc3339(period.from)), "to": (rfc3339(period.to))},
            "totals_cents": (counts(&self.totals)),
            "executions": (self.executions),
            "by_status": (counts(&self.by_status)),
            "by_task": by_task,
            "most_expensive": most_expensive,
            "truncated": truncated,
        })
    }

    /// One line for a person: "R$ 12,34 over 5 executions in the last 30 days."
    pub fn line(&self, days: i64) -> String {
        let amounts: Vec<String> = self
            .totals
            .iter()
            .map(|(cur, cents)| money::format(cur, *cents))
            .collect();
        let amount = if amounts.is_empty() {
            money::format("BRL", 0)
        } else {
            amounts.join(" + ")
        };
        let executions = if self.executions == 1 {
            "1 execution".to_owned()
        } else {
            format!("{} executions", self.executions)
        };
        let period = if days == 1 {
            "day".to_owned()
        } else {
            format!("{} days", days)
        };
        format!("{} over {} in the last {}.", amount, executions, period)
    }

    pub fn executions(&self) -> u64 {
        self.executions
    }
}

fn counts<N: Copy + Into<Value>>(m: &BTreeMap<String, N>) -> Value {
    Value::Object(m.iter().map(|(k, n)| (k.clone(), (*n).into())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> Vec<Value> {
        kadu::json::parse(text).unwrap().as_array().unwrap().clone()
    }

    #[test]
    fn sums_by_currency_status_and_task() {
        let mut s = Summary::default();
        s.add_page(&page(
            r#"[{"id":"exe_1","task_id":"tsk_a","status":"succeeded","cost":{"amount_cents":500,"currency":"BRL"}},
                {"id":"exe_2","task_id":"tsk_b","status":"failed","cost":{"amount_cents":700,"currency":"BRL"}}]"#,
        ));
        s.add_page(&page(r#"[{"id":"exe_0","task_id":"tsk_a","status":"succeeded","cost":{"amount_cents":700,"currency":"BRL"}}]"#));
        let v = s.to_json(
            Period::ending_at(30, 1_793_491_200),
            Some(("tsk_a", "Resumo")),
            true,
        );
        assert_eq!(
            v.to_string(),
            concat!(
                r#"{"period":{"days":30,"from":"2026-10-02T00:00:00Z","to":"2026-11-01T00:00:00Z"},"#,
                r#""totals_cents":{"BRL":1900},"executions":3,"by_status":{"failed":1,"succeeded":2},"#,
                r#""by_task":[{"task_id":"tsk_a","task_name":"Resumo","executions":2,"cost_cents":1200},{"task_id":"tsk_b","executions":1,"cost_cents":700}],"#,
                r#""most_expensive":{"execution_id":"exe_0","task_id":"tsk_a","cost_cents":700,"currency":"BRL"},"truncated":true}"#
            )
        );
        assert_eq!(
            s.line(30),
            "R$ 19,00 over 3 executions in the last 30 days."
        );
    }

    #[test]
    fn empty_period() {
        let s = Summary::default();
        let v = s.to_json(Period::ending_at(1, 86_400), None, false);
        assert_eq!(v["totals_cents"].to_string(), "{}");
        assert!(v["most_expensive"].is_null());
        assert_eq!(s.line(1), "R$ 0,00 over 0 executions in the last day.");
    }
}
