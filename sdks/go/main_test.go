package aegis

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The real server the suite runs against (sdks/testing/serve.ts), unless AEGIS_TEST_API_URL,
// AEGIS_TEST_API_KEY and AEGIS_TEST_GATEWAY_URL name one.
var testServer struct {
	URL        string `json:"url"`
	APIKey     string `json:"apiKey"`
	GatewayURL string `json:"gatewayUrl"`
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	testServer.URL = os.Getenv("AEGIS_TEST_API_URL")
	testServer.APIKey = os.Getenv("AEGIS_TEST_API_KEY")
	testServer.GatewayURL = os.Getenv("AEGIS_TEST_GATEWAY_URL")
	if testServer.URL != "" && testServer.APIKey != "" && testServer.GatewayURL != "" {
		return m.Run()
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command("node", filepath.Join(repo, "bin/run-ts.mjs"), filepath.Join(repo, "sdks/testing/serve.ts"))
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the test server:", err)
		return 1
	}
	// Closing stdin stops the server; Wait reaps it.
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	lines := make(chan string, 1)
	go func() {
		reader := bufio.NewReader(stdout)
		line, _ := reader.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, reader)
	}()
	select {
	case line := <-lines:
		if err := json.Unmarshal([]byte(line), &testServer); err != nil || testServer.URL == "" {
			fmt.Fprintf(os.Stderr, "the test server printed %q: %v\n", line, err)
			return 1
		}
	case <-time.After(90 * time.Second):
		fmt.Fprintln(os.Stderr, "the test server did not start within 90 s")
		return 1
	}
	return m.Run()
}

func newTestClient(opts ...Option) *Client {
	return NewClient(append([]Option{WithAPIKey(testServer.APIKey), WithBaseURL(testServer.URL)}, opts...)...)
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var uniqueCounter int64

// unique returns a name no other test (or run) uses.
func unique(prefix string) string {
	uniqueCounter++
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1_000_000_000, uniqueCounter)
}

// newSite creates a Shield site removed at the end of the test.
func newSite(t *testing.T, c *Client) *ShieldSite {
	t.Helper()
	ctx := testContext(t)
	site, err := c.ShieldSites.Create(ctx, ShieldSiteCreateParams{
		Domain:    unique("site") + ".example.com",
		OriginURL: "http://127.0.0.1:9",
		Mode:      ShieldSiteCreateParamsModeBlock,
	})
	if err != nil {
		t.Fatalf("creating a site: %v", err)
	}
	t.Cleanup(func() { _ = c.ShieldSites.Delete(context.Background(), site.ID) })
	return site
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
