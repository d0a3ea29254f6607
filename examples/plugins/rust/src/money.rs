//! Amounts in cents as a person reads them.

/// Formats `cents` of `currency`: Brazilian reais as `R$ 1.234,56`, any
/// other currency as `USD 1,234.56`.
pub fn format(currency: &str, cents: i64) -> String {
    let (thousands, decimal, prefix) = if currency == "BRL" {
        ('.', ',', "R$")
    } else {
        (',', '.', currency)
    };
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    let units = (abs / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in units.chars().enumerate() {
        if i > 0 && (units.len() - i) % 3 == 0 {
            grouped.push(thousands);
        }
        grouped.push(c);
    }
    format!("{} {}{}{}{:02}", prefix, sign, grouped, decimal, abs % 100)
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn formats_brl_and_others() {
        assert_eq!(format("BRL", 1234), "R$ 12,34");
        assert_eq!(format("BRL", 0), "R$ 0,00");
        assert_eq!(format("BRL", 5), "R$ 0,05");
        assert_eq!(format("BRL", 123_456_789), "R$ 1.234.567,89");
        assert_eq!(format("BRL", -250), "R$ -2,50");
        assert_eq!(format("USD", 123_456), "USD 1,234.56");
        assert_eq!(format("EUR", i64::MIN), "EUR -92,233,720,368,547,758.08");
    }
}
