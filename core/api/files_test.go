package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/storetest"
)

func TestFiles(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"Lifecycle":         testFileLifecycle,
		"Rejected":          testFileRejected,
		"Validation":        testFileValidation,
		"PlanSizeLimit":     testFilePlanSizeLimit,
		"Expired":           testFileExpired,
		"Roles":             testFileRoles,
		"CrossOrg":          testFileCrossOrg,
		"List":              testFileList,
		"Unavailable":       testFilesUnavailable,
		"ConcurrentConfirm": testFileConcurrentConfirm,
		"IdempotentCreate":  testFileIdempotentCreate,
		"RunInputFiles":     testRunInputFiles,
	})
}

// testFileLifecycle: create → nothing uploaded yet (409) → upload →
// confirm → ready (file.ready emitted once) → confirm again unchanged →
// download URL.
func testFileLifecycle(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	org := newOrg()
	tok := fe.token(writer(org))
	start := fe.clock.Now()
	sum := digest(statement)

	r := fe.do(tok, "POST", "/files", map[string]any{"filename": "extrato março.csv", "content_type": "text/csv",
		"size_bytes": len(statement), "sha256": strings.ToUpper(sum)})
	body := must(t, r, http.StatusCreated)
	file, up := body["file"].(map[string]any), body["upload"].(map[string]any)
	id := file["id"].(string)
	if !store.ValidID(store.PrefixFile, id) || r.header.Get("Location") != BasePath+"/files/"+id {
		t.Fatalf("id %q, Location %q", id, r.header.Get("Location"))
	}
	want := map[string]any{"filename": "extrato março.csv", "content_type": "text/csv", "size_bytes": float64(len(statement)),
		"sha256": sum, "purpose": "input", "status": "pending_upload", "rejected_reason": nil, "execution_id": nil,
		"expires_at": ts(start.Add(time.Hour))}
	for k, v := range want {
		if file[k] != v {
			t.Errorf("file.%s = %v, want %v", k, file[k], v)
		}
	}
	if len(file) != 11 {
		t.Errorf("file has %d fields, want 11: %v", len(file), file)
	}
	if strings.Contains(fmt.Sprint(file), org) {
		t.Errorf("the file shows its blob key: %v", file)
	}
	if up["expires_at"] != ts(start.Add(15*time.Minute)) || up["headers"].(map[string]any)["Content-Type"] != "text/csv" {
		t.Errorf("upload = %v", up)
	}

	wantProblem(t, fe.do(tok, "POST", "/files/"+id+"/confirm", nil), http.StatusConflict, "invalid_state", "")
	wantProblem(t, fe.do(tok, "GET", "/files/"+id+"/download", nil), http.StatusConflict, "invalid_state", "")

	fe.clock.Advance(14 * time.Minute)
	fe.blobs.upload(t, up, statement, fe.clock.Now())
	if got := must(t, fe.do(tok, "GET", "/files/"+id, nil), http.StatusOK); got["status"] != "pending_upload" {
		t.Errorf("an upload alone changed the status to %v", got["status"])
	}
	ready := must(t, fe.do(tok, "POST", "/files/"+id+"/confirm", nil), http.StatusOK)
	if ready["status"] != "ready" || ready["sha256"] != sum || ready["expires_at"] != nil || ready["created_at"] != file["created_at"] {
		t.Errorf("confirmed file = %v", ready)
	}
	if ev := fe.queue.eventCodes(); !slices.Equal(ev, []string{EventFileReady}) {
		t.Errorf("events = %v, want one file.ready", ev)
	}
	again := fe.do(tok, "POST", "/files/"+id+"/confirm", nil)
	if must(t, again, http.StatusOK); fmt.Sprint(again.json(t)) != fmt.Sprint(ready) {
		t.Errorf("confirming again changed the file: %s", again.body)
	}
	if ev := fe.queue.eventCodes(); len(ev) != 1 {
		t.Errorf("confirming again emitted %v", ev)
	}

	viewerTok := fe.token(viewer(org))
	if got := must(t, fe.do(viewerTok, "GET", "/files/"+id, nil), http.StatusOK); fmt.Sprint(got) != fmt.Sprint(ready) {
		t.Errorf("GET = %v, want %v", got, ready)
	}
	dl := must(t, fe.do(viewerTok, "GET", "/files/"+id+"/download", nil), http.StatusOK)
	if dl["expires_at"] != ts(fe.clock.Now().Add(5*time.Minute)) || len(dl) != 2 ||
		!strings.Contains(dl["url"].(string), "filename="+url.QueryEscape("extrato março.csv")) {
		t.Errorf("download = %v", dl)
	}
}

// testFileRejected: an upload that differs from the declaration is
// rejected with a reason naming what differed, and discarded.
func testFileRejected(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	org := newOrg()
	tok := fe.token(writer(org))
	task := fe.createTask(fe.token(owner(org)), "t", nil)
	hello := []byte("hello, world")
	tests := []struct {
		name        string
		contentType string // declared
		storedType  string
		stored      []byte
		wantStatus  string
		wantReason  []string // substrings of rejected_reason
	}{
		{name: "size", contentType: "text/csv", storedType: "text/csv", stored: hello[:10], wantStatus: "rejected",
			wantReason: []string{"size_bytes", "12 bytes were declared, 10 were uploaded"}},
		{name: "content type", contentType: "text/csv", storedType: "application/pdf", stored: hello, wantStatus: "rejected",
			wantReason: []string{"content_type", `"text/csv" was declared`, `"application/pdf"`}},
		{name: "sha256", contentType: "text/csv", storedType: "text/csv", stored: []byte("HELLO, WORLD"), wantStatus: "rejected",
			wantReason: []string{"sha256", digest(hello) + " was declared", digest([]byte("HELLO, WORLD"))}},
		{name: "same media type spelled otherwise", contentType: "Text/CSV; charset=UTF-8", storedType: "text/csv;charset=utf-8",
			stored: hello, wantStatus: "ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, _ := fe.create(tok, "a.csv", tt.contentType, hello)
			id := file["id"].(string)
			key := org + "/" + id
			fe.blobs.put(key, tt.storedType, tt.stored)
			got := must(t, fe.do(tok, "POST", "/files/"+id+"/confirm", nil), http.StatusOK)
			if got["status"] != tt.wantStatus {
				t.Fatalf("status = %v, want %s: %v", got["status"], tt.wantStatus, got)
			}
			if tt.wantStatus == "ready" {
				if !fe.blobs.has(key) || got["rejected_reason"] != nil {
					t.Errorf("a matching upload: %v, blob kept %v", got, fe.blobs.has(key))
				}
				return
			}
			reason, _ := got["rejected_reason"].(string)
			for _, s := range tt.wantReason {
				if !strings.Contains(reason, s) {
					t.Errorf("rejected_reason %q does not say %q", reason, s)
				}
			}
			if got["sha256"] != digest(hello) || got["size_bytes"] != float64(len(hello)) {
				t.Errorf("a rejected file shows what was declared: %v", got)
			}
			if fe.blobs.has(key) {
				t.Errorf("the rejected upload was kept")
			}
			if again := must(t, fe.do(tok, "POST", "/files/"+id+"/confirm", nil), http.StatusOK); again["status"] != "rejected" {
				t.Errorf("confirming again: %v", again)
			}
			wantProblem(t, fe.do(tok, "GET", "/files/"+id+"/download", nil), http.StatusConflict, "invalid_state", "")
			wantProblem(t, fe.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"},
				"input_file_ids": []string{id}}), http.StatusUnprocessableEntity, "validation_error", "input_file_ids[0]")
		})
	}
	if ev := fe.queue.eventCodes(); len(ev) != 1 {
		t.Errorf("events = %v, want file.ready for the one matching upload only", ev)
	}
}

func testFileValidation(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	tok := fe.token(writer(newOrg()))
	ok := map[string]any{"filename": "a.csv", "content_type": "text/csv", "size_bytes": 10}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ok {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name       string
		body       map[string]any
		wantParams []string
	}{
		{"nothing", map[string]any{}, []string{"filename", "content_type", "size_bytes"}},
		{"filename missing", with("filename", nil), []string{"filename"}},
		{"filename empty", with("filename", ""), []string{"filename"}},
		{"filename with a slash", with("filename", "dir/a.csv"), []string{"filename"}},
		{"filename with a backslash", with("filename", `dir\a.csv`), []string{"filename"}},
		{"filename with a line break", with("filename", "a\n.csv"), []string{"filename"}},
		{"filename with a NUL", with("filename", "a\x00.csv"), []string{"filename"}},
		{"filename dot dot", with("filename", ".."), []string{"filename"}},
		{"filename too long", with("filename", strings.Repeat("é", 256)), []string{"filename"}},
		{"filename a number", with("filename", 7), []string{"filename"}},
		{"content_type without subtype", with("content_type", "csv"), []string{"content_type"}},
		{"content_type half", with("content_type", "text/"), []string{"content_type"}},
		{"content_type empty", with("content_type", ""), []string{"content_type"}},
		{"size_bytes zero", with("size_bytes", 0), []string{"size_bytes"}},
		{"size_bytes negative", with("size_bytes", -5), []string{"size_bytes"}},
		{"size_bytes fractional", with("size_bytes", 1.5), []string{"size_bytes"}},
		{"size_bytes a string", with("size_bytes", "10"), []string{"size_bytes"}},
		{"sha256 not hex", with("sha256", strings.Repeat("z", 64)), []string{"sha256"}},
		{"sha256 short", with("sha256", strings.Repeat("a", 63)), []string{"sha256"}},
		{"purpose is not a field", with("purpose", "output"), []string{"purpose"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fe.do(tok, "POST", "/files", tt.body)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			if got := r.params(t); !slices.Equal(got, tt.wantParams) {
				t.Fatalf("params = %v, want %v: %s", got, tt.wantParams, r.body)
			}
		})
	}
	// The longest name, a null sha256 and parameters in the media type are fine.
	body := with("filename", strings.Repeat("é", 251)+".csv")
	body["sha256"] = nil
	body["content_type"] = "text/csv; charset=utf-8"
	must(t, fe.do(tok, "POST", "/files", body), http.StatusCreated)
	if l := must(t, fe.do(tok, "GET", "/files", nil), http.StatusOK); len(l["data"].([]any)) != 1 {
		t.Errorf("refused requests left files: %v", l)
	}
}

func testFilePlanSizeLimit(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db, tinyPlan) // max_file_size_bytes 1 MiB
	tok := fe.token(writer(newOrg()))
	r := fe.do(tok, "POST", "/files", map[string]any{"filename": "big.ofx", "content_type": "application/x-ofx", "size_bytes": 1<<20 + 1})
	wantProblem(t, r, http.StatusUnprocessableEntity, "validation_error", "size_bytes")
	if detail := r.json(t)["errors"].([]any)[0].(map[string]any)["detail"].(string); !strings.Contains(detail, "1048576") || !strings.Contains(detail, "tiny") {
		t.Errorf("detail %q does not name the plan's limit", detail)
	}
	must(t, fe.do(tok, "POST", "/files", map[string]any{"filename": "big.ofx", "content_type": "application/x-ofx", "size_bytes": 1 << 20}), http.StatusCreated)
}

// testFileExpired: an upload confirmed after its hour is refused, before
// and after the maintenance job marks it expired.
func testFileExpired(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	org := newOrg()
	tok := fe.token(writer(org))
	file, up := fe.create(tok, "late.csv", "text/csv", statement)
	id := file["id"].(string)
	fe.blobs.upload(t, up, statement, fe.clock.Now())
	fe.clock.Advance(time.Hour)
	wantProblem(t, fe.do(tok, "POST", "/files/"+id+"/confirm", nil), http.StatusConflict, "invalid_state", "")

	expired, err := db.ExpireUploads(context.Background(), fe.clock.Now())
	if err != nil || len(expired) != 1 {
		t.Fatalf("ExpireUploads = %v, %v", expired, err)
	}
	if got := must(t, fe.do(tok, "GET", "/files/"+id, nil), http.StatusOK); got["status"] != "expired" || got["expires_at"] != file["expires_at"] {
		t.Errorf("expired file = %v", got)
	}
	wantProblem(t, fe.do(tok, "POST", "/files/"+id+"/confirm", nil), http.StatusConflict, "invalid_state", "")
	wantProblem(t, fe.do(tok, "GET", "/files/"+id+"/download", nil), http.StatusConflict, "invalid_state", "")
	if ev := fe.queue.eventCodes(); len(ev) != 0 {
		t.Errorf("events = %v", ev)
	}
}

func testFileRoles(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	org := newOrg()
	creator, other := fe.token(writer(org)), fe.token(user{org, "member-2", "member", []string{"kadu.write"}})
	id := fe.readyFile(creator, "a.csv", statement)

	view := fe.token(viewer(org))
	wantProblem(t, fe.do(view, "POST", "/files", map[string]any{"filename": "v.csv", "content_type": "text/csv", "size_bytes": 3}),
		http.StatusForbidden, "forbidden_role", "")
	wantProblem(t, fe.do(view, "DELETE", "/files/"+id, nil), http.StatusForbidden, "forbidden_role", "")
	for _, path := range []string{"/files", "/files/" + id, "/files/" + id + "/download"} {
		must(t, fe.do(view, "GET", path, nil), http.StatusOK)
	}

	wantProblem(t, fe.do(other, "DELETE", "/files/"+id, nil), http.StatusForbidden, "forbidden_role", "")
	must(t, fe.do(other, "GET", "/files/"+id, nil), http.StatusOK)

	adminTok := fe.token(admin(org))
	if got := must(t, fe.do(adminTok, "DELETE", "/files/"+id, nil), http.StatusOK); got["id"] != id || got["deleted"] != true {
		t.Errorf("DELETE = %v", got)
	}
	wantProblem(t, fe.do(creator, "GET", "/files/"+id, nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, fe.do(adminTok, "DELETE", "/files/"+id, nil), http.StatusNotFound, "not_found", "")
	if !fe.blobs.has(org + "/" + id) {
		t.Errorf("a soft delete removed the blob before the retention window")
	}

	own := fe.readyFile(creator, "b.csv", statement)
	must(t, fe.do(creator, "DELETE", "/files/"+own, nil), http.StatusOK)
	if l := must(t, fe.do(creator, "GET", "/files", nil), http.StatusOK); len(l["data"].([]any)) != 0 {
		t.Errorf("deleted files are listed: %v", l["data"])
	}
}

// testFileCrossOrg: another organisation's file ids are 404 on every
// route and refused in input_file_ids; the file is unchanged.
func testFileCrossOrg(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	orgA, orgB := newOrg(), newOrg()
	tokA, tokB := fe.token(owner(orgA)), fe.token(owner(orgB))
	ready := fe.readyFile(tokA, "a.csv", statement)
	pendingFile, _ := fe.create(tokA, "p.csv", "text/csv", statement)
	pending := pendingFile["id"].(string)
	for _, id := range []string{ready, pending} {
		for _, rc := range []struct{ method, path string }{
			{"GET", "/files/" + id}, {"POST", "/files/" + id + "/confirm"}, {"GET", "/files/" + id + "/download"}, {"DELETE", "/files/" + id},
		} {
			wantProblem(t, fe.do(tokB, rc.method, rc.path, nil), http.StatusNotFound, "not_found", "")
		}
	}
	if l := must(t, fe.do(tokB, "GET", "/files", nil), http.StatusOK); len(l["data"].([]any)) != 0 {
		t.Errorf("org B lists %v", l["data"])
	}
	task := fe.createTask(tokB, "t", nil)
	wantProblem(t, fe.do(tokB, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"},
		"input_file_ids": []string{ready}}), http.StatusUnprocessableEntity, "validation_error", "input_file_ids[0]")
	if got := must(t, fe.do(tokA, "GET", "/files/"+ready, nil), http.StatusOK); got["status"] != "ready" {
		t.Errorf("A's file = %v", got)
	}
	if got := must(t, fe.do(tokA, "GET", "/files/"+pending, nil), http.StatusOK); got["status"] != "pending_upload" {
		t.Errorf("A's pending file = %v", got)
	}
	wantProblem(t, fe.do(tokA, "GET", "/files/file_notanid", nil), http.StatusNotFound, "not_found", "")
}

func testFileList(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	org := newOrg()
	tok := fe.token(owner(org))
	a := fe.readyFile(tok, "a.csv", statement)
	pf, _ := fe.create(tok, "b.csv", "text/csv", statement)
	b := pf["id"].(string)
	c := fe.readyFile(tok, "c.csv", statement)
	task := fe.createTask(tok, "t", nil)
	x := fe.executionIn(org, task, "owner-1", store.StatusRunning)
	expires := time.Now().Add(time.Hour)
	out, err := db.CreateFile(context.Background(), org, store.File{Filename: "out.csv", ContentType: "text/csv", SizeBytes: 2,
		Purpose: store.FileOutput, ExecutionID: x.ID, CreatedBy: "owner-1", ExpiresAt: &expires})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(query string) []string {
		t.Helper()
		l := must(t, fe.do(tok, "GET", "/files?"+query, nil), http.StatusOK)
		var got []string
		for _, it := range l["data"].([]any) {
			got = append(got, it.(map[string]any)["id"].(string))
		}
		return got
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{out.ID, c, b, a}},
		{"purpose=input", []string{c, b, a}},
		{"purpose=output", []string{out.ID}},
		{"status=ready", []string{c, a}},
		{"status=pending_upload", []string{out.ID, b}},
		{"purpose=input&status=pending_upload", []string{b}},
		{"execution_id=" + x.ID, []string{out.ID}},
		{"status=expired", nil},
	}
	for _, tt := range tests {
		if got := ids(tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("?%s = %v, want %v", tt.query, got, tt.want)
		}
	}
	for query, param := range map[string]string{
		"purpose=scratch": "purpose", "status=done": "status", "execution_id=exe_1": "execution_id", "owner=me": "owner",
	} {
		wantProblem(t, fe.do(tok, "GET", "/files?"+query, nil), http.StatusUnprocessableEntity, "validation_error", param)
	}

	l := must(t, fe.do(tok, "GET", "/files?purpose=input&limit=2", nil), http.StatusOK)
	next := l["meta"].(map[string]any)["next_cursor"].(string)
	if got := ids("purpose=input&limit=2&cursor=" + url.QueryEscape(next)); !slices.Equal(got, []string{a}) {
		t.Errorf("second page = %v, want [%s]", got, a)
	}
	wantProblem(t, fe.do(tok, "GET", "/files?purpose=output&limit=2&cursor="+url.QueryEscape(next), nil),
		http.StatusBadRequest, "invalid_cursor", "cursor")
}

// testFilesUnavailable: without blob storage every /files route is 503
// with Retry-After, and input_file_ids is refused.
func testFilesUnavailable(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	id := store.NewID(store.PrefixFile)
	for _, rc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/files", nil},
		{"POST", "/files", map[string]any{"filename": "a.csv", "content_type": "text/csv", "size_bytes": 3}},
		{"GET", "/files/" + id, nil},
		{"POST", "/files/" + id + "/confirm", nil},
		{"GET", "/files/" + id + "/download", nil},
		{"DELETE", "/files/" + id, nil},
	} {
		r := e.do(tok, rc.method, rc.path, rc.body)
		wantProblem(t, r, http.StatusServiceUnavailable, "unavailable", "")
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: no Retry-After", rc.method, rc.path)
		}
	}
	task := e.createTask(tok, "t", nil)
	wantProblem(t, e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"},
		"input_file_ids": []string{id}}), http.StatusUnprocessableEntity, "validation_error", "input_file_ids")
}

// testFileConcurrentConfirm: confirms racing on one upload all answer the
// ready file, and file.ready is emitted once.
func testFileConcurrentConfirm(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	org := newOrg()
	tok := fe.token(writer(org))
	file, up := fe.create(tok, "a.csv", "text/csv", statement)
	fe.blobs.upload(t, up, statement, fe.clock.Now())
	const n = 6
	statuses := make([]int, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", fe.srv.URL+BasePath+"/files/"+file["id"].(string)+"/confirm", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := fe.srv.Client().Do(req)
			if err != nil {
				bodies[i] = err.Error()
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			statuses[i], bodies[i] = res.StatusCode, string(b)
		})
	}
	wg.Wait()
	for i := range n {
		if statuses[i] != http.StatusOK || !strings.Contains(bodies[i], `"status":"ready"`) {
			t.Errorf("confirm %d: %d %s", i, statuses[i], bodies[i])
		}
	}
	if ev := fe.queue.eventCodes(); len(ev) != 1 {
		t.Errorf("events = %v, want one file.ready", ev)
	}
}

func testFileIdempotentCreate(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	tok := fe.token(writer(newOrg()))
	body := map[string]any{"filename": "a.csv", "content_type": "text/csv", "size_bytes": 3, "idempotency_key": "k1"}
	first := fe.do(tok, "POST", "/files", body)
	must(t, first, http.StatusCreated)
	second := fe.do(tok, "POST", "/files", body)
	must(t, second, http.StatusCreated)
	if second.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.body, second.body) ||
		second.header.Get("Location") == "" || second.header.Get("Location") != first.header.Get("Location") {
		t.Errorf("replay: %v %s\nfirst %s", second.header, second.body, first.body)
	}
	body["size_bytes"] = 4
	wantProblem(t, fe.do(tok, "POST", "/files", body), http.StatusUnprocessableEntity, "idempotency_key_reused", "idempotency_key")
	if l := must(t, fe.do(tok, "GET", "/files", nil), http.StatusOK); len(l["data"].([]any)) != 1 {
		t.Errorf("%d files, want 1", len(l["data"].([]any)))
	}
}

// testRunInputFiles: a run takes ready files of the organisation, of
// either purpose, each once; anything else is refused per index.
func testRunInputFiles(t *testing.T, db *store.DB) {
	fe := newFileEnv(t, db)
	org, other := newOrg(), newOrg()
	own, tok := fe.token(owner(org)), fe.token(writer(org))
	task := fe.createTask(own, "t", nil)
	ready := fe.readyFile(tok, "a.csv", statement)
	x := fe.executionIn(org, task, "member-1", store.StatusRunning)
	expires := time.Now().Add(time.Hour)
	out, err := db.CreateFile(context.Background(), org, store.File{Filename: "out.csv", ContentType: "text/csv", SizeBytes: 2,
		Purpose: store.FileOutput, ExecutionID: x.ID, CreatedBy: "member-1", ExpiresAt: &expires})
	if err == nil {
		out, err = db.SettleFile(context.Background(), org, out.ID, store.FileSettlement{Status: store.FileReady, SHA256: digest([]byte("ok")), SizeBytes: 2})
	}
	if err != nil {
		t.Fatal(err)
	}
	pf, _ := fe.create(tok, "p.csv", "text/csv", statement)
	pending := pf["id"].(string)
	foreign := fe.readyFile(fe.token(writer(other)), "f.csv", statement)
	deleted := fe.readyFile(tok, "d.csv", statement)
	must(t, fe.do(tok, "DELETE", "/files/"+deleted, nil), http.StatusOK)
	missing := store.NewID(store.PrefixFile)
	run := func(ids []string) resp {
		return fe.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}, "input_file_ids": ids})
	}

	x2 := must(t, run([]string{ready, out.ID}), http.StatusAccepted)
	if got := fmt.Sprint(x2["input_file_ids"]); got != fmt.Sprint([]any{ready, out.ID}) {
		t.Errorf("input_file_ids = %s, want [%s %s] in order", got, ready, out.ID)
	}
	tooMany := make([]string, 21)
	for i := range tooMany {
		tooMany[i] = store.NewID(store.PrefixFile)
	}
	tests := []struct {
		name       string
		ids        []string
		wantParams []string
	}{
		{"pending, foreign, deleted, missing", []string{ready, pending, foreign, deleted, missing},
			[]string{"input_file_ids[1]", "input_file_ids[2]", "input_file_ids[3]", "input_file_ids[4]"}},
		{"listed twice", []string{ready, out.ID, ready}, []string{"input_file_ids[2]"}},
		{"more than 20", tooMany, []string{"input_file_ids"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(tt.ids)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			if got := r.params(t); !slices.Equal(got, tt.wantParams) {
				t.Fatalf("params = %v, want %v: %s", got, tt.wantParams, r.body)
			}
		})
	}
	r := run([]string{pending})
	if detail := r.json(t)["errors"].([]any)[0].(map[string]any)["detail"].(string); !strings.Contains(detail, "pending_upload") {
		t.Errorf("detail %q does not say the file is pending_upload", detail)
	}
	if enq, _, _ := fe.queue.snapshot(); len(enq) != 1 {
		t.Errorf("enqueued %v, want only the valid launch", enq)
	}
}

func TestSameMediaType(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"text/csv", "text/csv", true},
		{"text/csv", "TEXT/CSV", true},
		{"text/csv; charset=UTF-8", "text/csv;charset=utf-8", true},
		{"text/csv; Charset=utf-8", "text/csv; charset=utf-8", true},
		{"text/csv", "text/csv; charset=utf-8", false},
		{"text/csv; charset=utf-8", "text/csv; charset=latin1", false},
		{"text/csv", "text/plain", false},
		{"application/x-ofx", "application/octet-stream", false},
		{"", "text/csv", false},
	}
	for _, tt := range tests {
		if got := sameMediaType(tt.a, tt.b); got != tt.want {
			t.Errorf("sameMediaType(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// FuzzSameMediaType: the comparison is reflexive and symmetric, so a
// confirm never rejects an upload sent with exactly the declared type.
func FuzzSameMediaType(f *testing.F) {
	for _, s := range []string{"text/csv", "text/csv; charset=UTF-8", "a/b;c=d;e=f", ";", "text/csv; x=\"a b\""} {
		f.Add(s, "text/csv")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !sameMediaType(a, a) {
			t.Errorf("sameMediaType(%q, itself) = false", a)
		}
		if sameMediaType(a, b) != sameMediaType(b, a) {
			t.Errorf("sameMediaType(%q, %q) is not symmetric", a, b)
		}
	})
}

// BenchmarkFileConfirm measures what a client's upload costs the API, end
// to end over loopback HTTP: POST /files, the (in-memory) PUT, and POST
// /files/{id}/confirm, which reads the content back to measure its
// SHA-256. Bytes are the file's size.
func BenchmarkFileConfirm(b *testing.B) {
	for _, be := range storetest.Backends() {
		for _, size := range []int{4 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%dKiB", be.Name, size>>10), func(b *testing.B) {
				fe := newFileEnv(b, be.Open(b, store.Options{MaxConns: 8}))
				tok := fe.token(writer(newOrg()))
				data := bytes.Repeat([]byte("01/03/2026;PIX;1,00\n"), size/20+1)[:size]
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					f, up := fe.create(tok, "a.csv", "text/csv", data)
					fe.blobs.upload(b, up, data, fe.clock.Now())
					if r := fe.do(tok, "POST", "/files/"+f["id"].(string)+"/confirm", nil); r.status != http.StatusOK {
						b.Fatalf("confirm: %d %s", r.status, r.body)
					}
				}
			})
		}
	}
}
