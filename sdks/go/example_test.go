package aegis

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The quickstart example runs against the test server, scanning a directory with a planted secret.
func TestQuickstartExample(t *testing.T) {
	dir := t.TempDir()
	secret := "aws_access_key_id = AKIA" + "QYLPMN5HFIQR7XYZ\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEYZ\n"
	if err := os.WriteFile(filepath.Join(dir, "config.ini"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./examples/quickstart", dir)
	cmd.Env = append(os.Environ(), "AEGIS_API_URL="+testServer.URL, "AEGIS_API_KEY="+testServer.APIKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"Shield site site_", "IP rule ", "Scan completed", "finding(s)"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\n0 finding(s)") {
		t.Fatalf("the planted secret was not found:\n%s", text)
	}
	t.Logf("quickstart output:\n%s", text)
}
