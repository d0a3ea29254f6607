package webhook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkSend measures whole deliveries (URL check, signing, POST over a
// kept-alive loopback connection, reading the answer) from parallel
// goroutines sharing one Client, as the delivery worker does.
//
//	go test -run '^$' -bench BenchmarkSend -benchmem ./core/webhook
func BenchmarkSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	c := loopbackClient(ClientOptions{})
	b.Cleanup(c.CloseIdleConnections)
	req := testRequest(srv.URL+"/hook", mustSecret(b), mustSecret(b))

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res := c.Send(context.Background(), req); !res.OK() {
				b.Errorf("Send() = %+v", res)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
}

// BenchmarkSign measures the signature of a 1 KiB event with two secrets
// (a rotation overlap).
func BenchmarkSign(b *testing.B) {
	secrets := []string{mustSecret(b), mustSecret(b)}
	body := make([]byte, 1024)
	ts := time.Unix(1772366400, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign(secrets, "evt_0195f3c1-7a2b-7c3d-8e4f-0a1b2c3d4e5f", ts, body); err != nil {
			b.Fatal(err)
		}
	}
}
