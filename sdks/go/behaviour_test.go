package aegis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPaginationAcrossPages(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	var csv strings.Builder
	csv.WriteString("type,value,action,note\n")
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&csv, "ip,10.9.0.%d,deny,row %d\n", i+1, i)
	}
	imported, err := c.IPAccessRules.Import(ctx, site.ID, strings.NewReader(csv.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if imported.Created != 25 {
		t.Fatalf("imported %+v", imported)
	}

	// Page by page: 10 + 10 + 5.
	limit := Int64(10)
	page, err := c.IPAccessRules.List(ctx, site.ID, &IPAccessRuleListQuery{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	pages, total := 0, 0
	for page != nil {
		pages++
		total += len(page.Data)
		if page, err = page.NextPage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if pages != 3 || total != 25 {
		t.Fatalf("%d pages, %d items", pages, total)
	}

	// Auto-paging: every item once.
	seen := map[string]bool{}
	it := c.IPAccessRules.ListAutoPaging(ctx, site.ID, &IPAccessRuleListQuery{Limit: limit})
	for it.Next() {
		rule := it.Current()
		if seen[rule.ID] {
			t.Fatalf("%s twice", rule.ID)
		}
		seen[rule.ID] = true
	}
	if it.Err() != nil || len(seen) != 25 {
		t.Fatalf("iterated %d: %v", len(seen), it.Err())
	}
}

func TestRateLimitRetriedAfterRetryAfter(t *testing.T) {
	ctx := testContext(t)
	site := newSite(t, newTestClient())
	// The analytics route allows 2 calls a second: the third gets a real 429 with Retry-After.
	noRetry := newTestClient(WithMaxRetries(0))
	time.Sleep(1100 * time.Millisecond)
	var last error
	for i := 0; i < 3; i++ {
		_, last = noRetry.ShieldAnalytics.Get(ctx, site.ID, nil)
	}
	apiErr, ok := AsError(last)
	if !ok || apiErr.StatusCode != 429 || apiErr.Code != "rate_limited" || !IsRateLimited(last) {
		t.Fatalf("third call: %v", last)
	}
	if apiErr.Header.Get("Retry-After") == "" || apiErr.RequestID == "" {
		t.Fatalf("no Retry-After or request id: %+v", apiErr)
	}

	time.Sleep(1100 * time.Millisecond)
	retrying := newTestClient(WithMaxRetries(3))
	start := time.Now()
	for i := 0; i < 3; i++ {
		if _, err := retrying.ShieldAnalytics.Get(ctx, site.ID, nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if time.Since(start) < 500*time.Millisecond {
		t.Fatalf("the third call did not wait for Retry-After (%v)", time.Since(start))
	}
}

func TestIdempotencyKeyReturnsTheSameObject(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	key := unique("idem")
	params := IPAccessRuleCreateParams{Type: IPAccessRuleCreateParamsTypeIP, Value: "198.51.100.10", Action: IPAccessRuleCreateParamsActionDeny}
	first, err := c.IPAccessRules.Create(ctx, site.ID, params, WithIdempotencyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.IPAccessRules.Create(ctx, site.ID, params, WithIdempotencyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != second.ID {
		t.Fatalf("two objects: %s, %s", first.ID, second.ID)
	}
	page, err := c.IPAccessRules.List(ctx, site.ID, nil)
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("list: %v, %d rules", err, len(page.Data))
	}
}

// dropFirstProxy forwards TCP connections to target, but reads the first request and then drops
// that connection without answering after forwarding it: the server ran the request, the client
// saw a broken connection (the case an idempotency key exists for).
type dropFirstProxy struct {
	listener net.Listener
	target   string
	count    int32
	keys     chan string
}

func startDropFirstProxy(t *testing.T, target string) *dropFirstProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropFirstProxy{listener: l, target: target, keys: make(chan string, 8)}
	go p.serve()
	t.Cleanup(func() { l.Close() })
	return p
}

func (p *dropFirstProxy) serve() {
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return
		}
		n := atomic.AddInt32(&p.count, 1)
		go p.handle(conn, n == 1)
	}
}

func (p *dropFirstProxy) handle(conn net.Conn, drop bool) {
	defer conn.Close()
	upstream, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer upstream.Close()
	if drop {
		// Forward the request, let the server answer, then drop both sides unanswered.
		req, err := http.ReadRequest(bufioReader(conn))
		if err != nil {
			return
		}
		p.keys <- req.Header.Get("Idempotency-Key")
		if err := req.Write(upstream); err != nil {
			return
		}
		resp, err := http.ReadResponse(bufioReader(upstream), req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(upstream, conn); upstream.(*net.TCPConn).CloseWrite() }()
	go func() { defer wg.Done(); _, _ = io.Copy(conn, upstream); conn.(*net.TCPConn).CloseWrite() }()
	wg.Wait()
}

func TestIdempotencyKeyReusedAcrossARetry(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	target := strings.TrimPrefix(testServer.URL, "http://")
	proxy := startDropFirstProxy(t, target)
	// A transport without keep-alives, so the retry opens the proxy's second connection.
	via := newTestClient(WithBaseURL("http://"+proxy.listener.Addr().String()), WithMaxRetries(2), WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))
	rule, err := via.IPAccessRules.Create(ctx, site.ID, IPAccessRuleCreateParams{Type: IPAccessRuleCreateParamsTypeIP, Value: "198.51.100.20", Action: IPAccessRuleCreateParamsActionDeny})
	if err != nil {
		t.Fatalf("create through the proxy: %v", err)
	}
	if atomic.LoadInt32(&proxy.count) < 2 {
		t.Fatalf("no retry happened (%d connections)", proxy.count)
	}
	if key := <-proxy.keys; key == "" {
		t.Fatal("the first attempt had no Idempotency-Key")
	}
	page, err := c.IPAccessRules.List(ctx, site.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != rule.ID {
		t.Fatalf("the retry created again: %d rules", len(page.Data))
	}

	// Without retries the dropped connection is a ConnectionError.
	proxy2 := startDropFirstProxy(t, target)
	once := newTestClient(WithBaseURL("http://"+proxy2.listener.Addr().String()), WithMaxRetries(0))
	_, err = once.ShieldSites.Get(ctx, site.ID)
	if !IsConnection(err) {
		t.Fatalf("expected a connection error, got %v", err)
	}
}

func TestTimeoutError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Accepts and never answers.
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	c := NewClient(WithAPIKey("k"), WithBaseURL("http://"+l.Addr().String()), WithMaxRetries(1), WithTimeout(150*time.Millisecond))
	start := time.Now()
	_, err = c.Identity.Me(context.Background())
	if !IsTimeout(err) {
		t.Fatalf("expected a timeout, got %v", err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatalf("not retried: %v", time.Since(start))
	}
	_, err = c.Identity.Me(context.Background(), WithRequestTimeout(50*time.Millisecond), WithRequestMaxRetries(0))
	if !IsTimeout(err) {
		t.Fatalf("expected a timeout, got %v", err)
	}
}

func TestTypedErrors(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	_, err := c.ShieldSites.Get(ctx, "site_doesnotexist", WithRequestID("req-go-sdk-test-1"))
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "not_found" || !IsNotFound(err) {
		t.Fatalf("404: %v", err)
	}
	if apiErr.RequestID != "req-go-sdk-test-1" {
		t.Fatalf("request id %q", apiErr.RequestID)
	}
	_, err = c.ShieldSites.Create(ctx, ShieldSiteCreateParams{Domain: "not a domain", OriginURL: "ftp://x", Mode: "sideways"})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || !IsValidation(err) {
		t.Fatalf("422: %v", err)
	}
	if apiErr.Code == "" || apiErr.Message == "" || apiErr.Details["fields"] == nil {
		t.Fatalf("422 without details: %+v", apiErr)
	}
	unauthorized := NewClient(WithAPIKey("svc_live_nope"), WithBaseURL(testServer.URL))
	if _, err := unauthorized.Identity.Me(ctx); !IsUnauthorized(err) {
		t.Fatalf("401: %v", err)
	}
}

func TestCSVImportRowError(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	csv := "type,value,action,note\nip,203.0.113.9,deny,ok\nip,not-an-ip,deny,bad\n"
	_, err := c.IPAccessRules.Import(ctx, site.ID, strings.NewReader(csv), nil)
	apiErr, ok := AsError(err)
	if !ok || apiErr.StatusCode != 422 {
		t.Fatalf("expected 422, got %v", err)
	}
	rows, _ := apiErr.Details["rows"].([]any)
	if len(rows) == 0 {
		t.Fatalf("no rows in details: %+v", apiErr.Details)
	}
	row, _ := rows[0].(map[string]any)
	if row["line"] != float64(3) || row["reason"] == nil {
		t.Fatalf("row error %+v", row)
	}
}

func TestLiveStreamReceivesADecision(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	ip := "198.51.100.77"
	if _, err := c.IPAccessRules.Create(ctx, site.ID, IPAccessRuleCreateParams{Type: IPAccessRuleCreateParamsTypeIP, Value: ip, Action: IPAccessRuleCreateParamsActionDeny}); err != nil {
		t.Fatal(err)
	}
	stream, err := c.ShieldLive.Stream(ctx, site.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	// Knock on the gateway until the rule is in force (it refreshes rules every 250 ms).
	go func() {
		for i := 0; i < 40 && ctx.Err() == nil; i++ {
			req, _ := http.NewRequestWithContext(ctx, "GET", testServer.GatewayURL+"/anything", nil)
			req.Host = site.Domain
			req.Header.Set("X-Forwarded-For", ip)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 403 {
					return
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
	}()

	if !stream.Next() {
		t.Fatalf("no decision: %v", stream.Err())
	}
	decision := stream.Current()
	if decision.ClientIP != ip || decision.SiteID != site.ID || string(decision.Action) != "block" {
		t.Fatalf("decision %+v", decision)
	}
	if stream.LastEventID() != decision.ID {
		t.Fatalf("last event id %q, decision %q", stream.LastEventID(), decision.ID)
	}
	stream.Close()
	if stream.Next() || stream.Err() != nil {
		t.Fatalf("after Close: %v", stream.Err())
	}

	// Resuming after the decision's id: nothing older is replayed, the stream opens fine.
	resumed, err := c.ShieldLive.Stream(ctx, site.ID, nil, WithLastEventID(decision.ID))
	if err != nil {
		t.Fatal(err)
	}
	resumed.Close()
}

func TestLiveStreamReconnectsWithLastEventID(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	ip := "198.51.100.78"
	if _, err := c.IPAccessRules.Create(ctx, site.ID, IPAccessRuleCreateParams{Type: IPAccessRuleCreateParamsTypeIP, Value: ip, Action: IPAccessRuleCreateParamsActionDeny}); err != nil {
		t.Fatal(err)
	}
	knock := func() {
		for i := 0; i < 40; i++ {
			req, _ := http.NewRequest("GET", testServer.GatewayURL+"/x", nil)
			req.Host = site.Domain
			req.Header.Set("X-Forwarded-For", ip)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 403 {
					return
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	stream, err := c.ShieldLive.Stream(ctx, site.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	go knock()
	if !stream.Next() {
		t.Fatalf("no first decision: %v", stream.Err())
	}
	first := stream.Current().ID
	// Break the connection under the stream; the next decision arrives over a reconnect that sent
	// Last-Event-ID.
	stream.closeBody()
	go knock()
	if !stream.Next() {
		t.Fatalf("no decision after the reconnect: %v", stream.Err())
	}
	if stream.Current().ID == first {
		t.Fatalf("the first decision was replayed")
	}
}

type webhookVector struct {
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	Body      string `json:"body"`
	Header    string `json:"header"`
	Now       int64  `json:"now"`
	Tolerance int64  `json:"tolerance"`
	Valid     bool   `json:"valid"`
}

func TestWebhookSignatureVectors(t *testing.T) {
	data, err := os.ReadFile("../testdata/webhook-signatures.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []webhookVector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) < 5 {
		t.Fatalf("only %d vectors", len(file.Vectors))
	}
	sawTampered, sawStale := false, false
	for _, v := range file.Vectors {
		got := VerifyWebhookSignature([]byte(v.Body), v.Header, v.Secret, time.Duration(v.Tolerance)*time.Second, time.Unix(v.Now, 0))
		if got != v.Valid {
			t.Errorf("%s: got %v, want %v", v.Name, got, v.Valid)
		}
		name := strings.ToLower(v.Name)
		sawTampered = sawTampered || strings.Contains(name, "tamper")
		sawStale = sawStale || strings.Contains(name, "stale") || strings.Contains(name, "old")
		event, err := ConstructEventAt([]byte(v.Body), v.Header, v.Secret, time.Duration(v.Tolerance)*time.Second, time.Unix(v.Now, 0))
		if v.Valid && (err != nil || event == nil) {
			t.Errorf("%s: ConstructEventAt: %v", v.Name, err)
		}
		if !v.Valid && !errors.Is(err, ErrInvalidSignature) {
			t.Errorf("%s: ConstructEventAt accepted it", v.Name)
		}
	}
	// Our own cases, whatever the vectors hold: a tampered body and a stale timestamp.
	valid := file.Vectors[0]
	if !valid.Valid {
		t.Fatal("the first vector is expected to be valid")
	}
	tolerance := time.Duration(valid.Tolerance) * time.Second
	if VerifyWebhookSignature([]byte(valid.Body+" "), valid.Header, valid.Secret, tolerance, time.Unix(valid.Now, 0)) {
		t.Error("tampered body accepted")
	}
	if VerifyWebhookSignature([]byte(valid.Body), valid.Header, valid.Secret, tolerance, time.Unix(valid.Now+3600, 0)) {
		t.Error("stale timestamp accepted")
	}
	if VerifyWebhookSignature([]byte(valid.Body), "garbage", valid.Secret, tolerance, time.Unix(valid.Now, 0)) {
		t.Error("malformed header accepted")
	}
	if !sawTampered || !sawStale {
		t.Errorf("the shared vectors should include a tampered body (%v) and a stale timestamp (%v)", sawTampered, sawStale)
	}
}

// Every operation of the API (sdks/openapi.json) has its method on the client's service.
func TestEveryOperationHasAMethod(t *testing.T) {
	data, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			SDK         *bool  `json:"x-aegis-sdk"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	client := reflect.ValueOf(NewClient(WithAPIKey("k")))
	count := 0
	for _, ops := range doc.Paths {
		for method, op := range ops {
			if op.OperationID == "" || (op.SDK != nil && !*op.SDK) || method == "parameters" {
				continue
			}
			count++
			resource, name, _ := strings.Cut(op.OperationID, ".")
			service := client.Elem().FieldByName(goIdentifier(resource))
			if !service.IsValid() || service.IsNil() {
				t.Errorf("%s: no service %s", op.OperationID, goIdentifier(resource))
				continue
			}
			if !service.MethodByName(goIdentifier(name)).IsValid() {
				t.Errorf("%s: no method %s.%s", op.OperationID, goIdentifier(resource), goIdentifier(name))
			}
		}
	}
	if count < 100 {
		t.Fatalf("only %d operations found", count)
	}
}

// goIdentifier spells an operationId part as names.ts's goName does.
func goIdentifier(name string) string {
	initialisms := map[string]bool{"id": true, "ip": true, "url": true, "api": true, "http": true, "json": true, "csv": true, "sso": true, "asn": true, "cve": true, "sca": true, "sast": true, "ai": true, "aws": true, "oidc": true, "saml": true, "uri": true, "sarif": true, "ttl": true, "cidr": true, "tls": true, "pr": true, "osv": true}
	var words []string
	start := 0
	for i := 1; i <= len(name); i++ {
		if i == len(name) || (name[i] >= 'A' && name[i] <= 'Z') {
			words = append(words, strings.ToLower(name[start:i]))
			start = i
		}
	}
	var out strings.Builder
	for _, w := range words {
		if initialisms[w] {
			out.WriteString(strings.ToUpper(w))
		} else {
			out.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return out.String()
}

func TestGofmtClean(t *testing.T) {
	gofmt, err := exec.LookPath("gofmt")
	if err != nil {
		t.Skip("gofmt not on PATH")
	}
	out, err := exec.Command(gofmt, "-l", ".").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("gofmt -l: %v\n%s", err, out)
	}
}
