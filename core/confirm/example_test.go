package confirm_test

import (
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/core/confirm"
)

// Describe is what the person reads before a destructive call runs: on
// the approval page in their language, in the chat in English. Explain
// (on a Confirmer) also names the task, file or webhook behind each id.
func ExampleDescribe() {
	args := json.RawMessage(`{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","input_file_ids":["file_1","file_2"]}`)
	fmt.Println(confirm.Describe("kadu_tasks_run", "Run a task", args, "en"))
	fmt.Println(confirm.Describe("kadu_tasks_run", "Run a task", args, "pt-BR"))
	fmt.Println(confirm.Describe("acme_purge", "Purge old records", json.RawMessage(`{"older_than_days":30}`), "en"))
	fmt.Println(confirm.BRL(123456))
	// Output:
	// Run task tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d with 2 input files.
	// Executar a tarefa tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d com 2 arquivos de entrada.
	// Run *Purge old records* with older_than_days: 30.
	// R$ 1.234,56
}
