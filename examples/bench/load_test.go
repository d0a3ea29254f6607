package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDecodeResponse(t *testing.T) {
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`, ""},
		{"event stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n", ""},
		{"rpc error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, "JSON-RPC error -32602 bad"},
		{"tool error", `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`, "tool error"},
		{"no result", `{"jsonrpc":"2.0","id":1}`, "no result"},
		{"not json", `<html>`, "not a JSON-RPC response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeResponse([]byte(tc.body))
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}

func TestOkCountsEveryKindOfFailure(t *testing.T) {
	for _, tc := range []struct {
		code uint16
		body string
		want bool
	}{
		{200, `{"result":{"content":[]}}`, true},
		{200, `{"result":{"content":[],"isError":true}}`, false},
		{200, `{"error":{"code":-32603}}`, false},
		{429, `{"result":{}}`, false},
		{0, ``, false},
	} {
		if got := ok(tc.code, []byte(tc.body)); got != tc.want {
			t.Errorf("ok(%d, %s) = %v, want %v", tc.code, tc.body, got, tc.want)
		}
	}
}

func TestQuantile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if q := quantile(d, 0.5); q != 50 {
		t.Errorf("p50 %d, want 50", q)
	}
	if q := quantile(d, 0.99); q != 99 {
		t.Errorf("p99 %d, want 99", q)
	}
	if q := quantile(d[:1], 0.99); q != 1 {
		t.Errorf("p99 of one %d, want 1", q)
	}
}

// echoServer answers every tools/call with the message, or with a tool
// error when failing.
func echoServer(t *testing.T, failing bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Params struct {
				Arguments struct{ Message string } `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil || r.Header.Get("Mcp-Name") != "echo" ||
			r.Header.Get("MCP-Protocol-Version") != protocolVersion {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		text, _ := json.Marshal(req.Params.Arguments.Message)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+string(text)+`}],"isError":`+
			map[bool]string{false: "false", true: "true"}[failing]+`}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAttackMeasuresAndCountsFailures(t *testing.T) {
	header, body, err := toolCall("tok", "echo", map[string]any{"message": echoMessage})
	if err != nil {
		t.Fatal(err)
	}
	good := target{Name: "good", URL: echoServer(t, false).URL, Header: header, Body: body}
	if err := verify(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	res, err := attack(context.Background(), good, 4, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Failed != 0 || res.RPS() <= 0 || res.P99 < res.P50 || res.P50 <= 0 {
		t.Errorf("good server: %+v", res)
	}

	bad := good
	bad.Name, bad.URL = "bad", echoServer(t, true).URL
	if err := verify(context.Background(), bad); err == nil {
		t.Error("verify passed a tool error")
	}
	res, err = attack(context.Background(), bad, 4, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != res.Requests || res.RPS() != 0 || !strings.Contains(res.FirstFailure, `"isError":true`) {
		t.Errorf("every isError answer must count as failed: %+v", res)
	}
}
