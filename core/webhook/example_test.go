package webhook_test

import (
	"fmt"
	"time"

	"github.com/kobana/kadu/core/webhook"
)

// A delivery is signed once per secret; during a rotation overlap the
// receiver can verify either signature.
func ExampleSign() {
	sig, err := webhook.Sign(
		[]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		"msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0),
		[]byte(`{"test": 2432232314}`),
	)
	if err != nil {
		panic(err)
	}
	fmt.Println(sig)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}

// The API checks an endpoint URL when a webhook is created or changed and
// answers 422 with the error's text.
func ExampleValidateURL() {
	allow := []string{"localhost.dev.test"}
	for _, u := range []string{
		"https://hooks.example.com/kadu",
		"http://hooks.example.com/kadu",
		"http://localhost.dev.test:8080/kadu",
		"https://169.254.169.254/latest/meta-data/",
	} {
		fmt.Println(u, "→", webhook.ValidateURL(u, allow))
	}
	// Output:
	// https://hooks.example.com/kadu → <nil>
	// http://hooks.example.com/kadu → url: must use https; plain http is accepted only for hosts an operator allow-lists for development
	// http://localhost.dev.test:8080/kadu → <nil>
	// https://169.254.169.254/latest/meta-data/ → url: 169.254.169.254 is not a public address (link-local (cloud metadata)); webhooks are delivered only to public addresses
}

// The delivery worker asks Next after every attempt.
func ExampleNext() {
	for attempt, res := range []webhook.Result{
		{StatusCode: 500},
		{StatusCode: 503, RetryAfter: time.Hour},
		{StatusCode: 200},
	} {
		d := webhook.Next(attempt+1, res)
		fmt.Printf("retry=%v delay=%s disable=%v: %s\n", d.Retry, d.Delay, d.Disable, d.Reason)
	}
	fmt.Println(webhook.Next(1, webhook.Result{StatusCode: 410}).Disable)
	// Output:
	// retry=true delay=5s disable=false: HTTP 500; attempt 1 of 8, next in 5s
	// retry=true delay=1h0m0s disable=false: HTTP 503; attempt 2 of 8, next in 1h0m0s
	// retry=false delay=0s disable=false: delivered: HTTP 200
	// true
}
