package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks reference vector, as published with the
// specification's libraries: a receiver's off-the-shelf library must accept
// what Kadu sends.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorMsgID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignReferenceVector(t *testing.T) {
	t.Parallel()
	got, err := Sign([]string{vectorSecret}, vectorMsgID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	if err != nil || got != vectorSignature {
		t.Fatalf("Sign() = %q, %v; want %q", got, err, vectorSignature)
	}
}

func TestSignRotation(t *testing.T) {
	t.Parallel()
	current, previous := mustSecret(t), mustSecret(t)
	ts := time.Date(2026, 3, 1, 12, 0, 0, 999, time.UTC)
	body := []byte(`{"id":"evt_1","event_code":"execution.succeeded"}`)

	got, err := Sign([]string{current, previous}, "evt_1", ts, body)
	if err != nil {
		t.Fatalf("Sign() error = %v", err)
	}
	sigs := strings.Split(got, " ")
	if len(sigs) != 2 {
		t.Fatalf("Sign() = %q, want two space-separated signatures", got)
	}
	content := "evt_1." + "1772366400" + "." + string(body) // sub-second part dropped
	for i, secret := range []string{current, previous} {
		if want := referenceSignature(t, secret, content); sigs[i] != want {
			t.Errorf("signature %d = %q, want %q (secret %d)", i, sigs[i], want, i)
		}
	}
	if sigs[0] == sigs[1] {
		t.Errorf("both signatures are %q; each secret must sign on its own", sigs[0])
	}
}

func TestSignErrors(t *testing.T) {
	t.Parallel()
	ok := mustSecret(t)
	ts := time.Unix(vectorTimestamp, 0)
	tests := []struct {
		name    string
		secrets []string
		msgID   string
		ts      time.Time
		wantErr string
	}{
		{name: "no secret", msgID: "evt_1", ts: ts, wantErr: "secrets: at least one"},
		{name: "second secret malformed", secrets: []string{ok, "whsec_short"}, msgID: "evt_1", ts: ts, wantErr: "secrets[1]: secret:"},
		{name: "empty id", secrets: []string{ok}, ts: ts, wantErr: "msg_id: must be 1 to 255"},
		{name: "dot in id", secrets: []string{ok}, msgID: "evt_1.2", ts: ts, wantErr: "msg_id: character 5"},
		{name: "space in id", secrets: []string{ok}, msgID: "evt 1", ts: ts, wantErr: "msg_id: character 3"},
		{name: "newline in id", secrets: []string{ok}, msgID: "evt_1\n", ts: ts, wantErr: "msg_id: character 5"},
		{name: "id too long", secrets: []string{ok}, msgID: strings.Repeat("e", 256), ts: ts, wantErr: "msg_id: must be 1 to 255"},
		{name: "zero timestamp", secrets: []string{ok}, msgID: "evt_1", wantErr: "timestamp: must be set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Sign(tt.secrets, tt.msgID, tt.ts, []byte("{}"))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Sign() = %q, %v; want an error containing %q", got, err, tt.wantErr)
			}
			for _, s := range tt.secrets {
				if strings.Contains(err.Error(), strings.TrimPrefix(s, "whsec_")) {
					t.Errorf("Sign() error %q repeats a secret", err)
				}
			}
		})
	}
}

// referenceSignature computes one v1 signature the way a receiver would,
// without this package's code.
func referenceSignature(t *testing.T, secret, content string) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("decoding test secret: %v", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(content))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func mustSecret(t testing.TB) string {
	t.Helper()
	s, err := NewSecret()
	if err != nil {
		t.Fatalf("NewSecret() error = %v", err)
	}
	return s
}
