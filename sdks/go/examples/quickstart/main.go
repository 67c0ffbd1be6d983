// Quickstart: create a Shield site with an IP rule, run a secrets scan of a local directory
// (uploaded as a tar.gz) and print its findings.
//
//	AEGIS_API_URL=http://localhost:3000 AEGIS_API_KEY=svc_live_… go run ./examples/quickstart [path]
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	aegis "github.com/aegis-sec/aegis-go"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := run(root); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The API key and URL come from AEGIS_API_KEY and AEGIS_API_URL.
	client := aegis.NewClient()

	site, err := client.ShieldSites.Create(ctx, aegis.ShieldSiteCreateParams{
		Domain:    fmt.Sprintf("quickstart-%d.example.com", time.Now().UnixNano()),
		OriginURL: "http://127.0.0.1:8080",
		Mode:      aegis.ShieldSiteCreateParamsModeBlock,
	})
	if err != nil {
		return fmt.Errorf("creating the Shield site: %w", err)
	}
	fmt.Printf("Shield site %s (%s)\n", site.ID, site.Domain)
	rule, err := client.IPAccessRules.Create(ctx, site.ID, aegis.IPAccessRuleCreateParams{
		Type:   aegis.IPAccessRuleCreateParamsTypeIP,
		Value:  "203.0.113.7",
		Action: aegis.IPAccessRuleCreateParamsActionDeny,
		Note:   aegis.String("quickstart"),
	})
	if err != nil {
		return fmt.Errorf("adding an IP rule: %w", err)
	}
	fmt.Printf("IP rule %s: %s %s\n", rule.ID, rule.Action, rule.Value)

	archive, err := tarGz(root)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", root, err)
	}
	scan, err := client.Scans.CreateSecretsRaw(ctx, bytes.NewReader(archive), "application/gzip", nil)
	if err != nil {
		return fmt.Errorf("starting the scan: %w", err)
	}
	fmt.Printf("Secrets scan %s of %s (%d bytes) queued\n", scan.ID, root, len(archive))
	for scan.Status == aegis.ScanStatusQueued || scan.Status == aegis.ScanStatusRunning {
		time.Sleep(500 * time.Millisecond)
		if scan, err = client.Scans.Get(ctx, scan.ID); err != nil {
			return fmt.Errorf("polling the scan: %w", err)
		}
	}
	fmt.Printf("Scan %s\n", scan.Status)
	if scan.Status != aegis.ScanStatusCompleted {
		if scan.Error != nil {
			return fmt.Errorf("scan %s: %s", scan.Status, *scan.Error)
		}
		return fmt.Errorf("scan %s", scan.Status)
	}

	findings := 0
	it := client.Vulnerabilities.ListAutoPaging(ctx, &aegis.VulnerabilityListQuery{ScanID: aegis.String(scan.ID)})
	for it.Next() {
		v := it.Current()
		findings++
		fmt.Printf("  [%s] %s — %v\n", v.Severity, v.Title, v.Location["path"])
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("listing findings: %w", err)
	}
	fmt.Printf("%d finding(s)\n", findings)
	return nil
}

// tarGz archives the regular files under root, skipping .git and node_modules.
func tarGz(root string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == ".git" || info.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		header, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		header.Name = strings.ReplaceAll(rel, string(filepath.Separator), "/")
		if err := tw.WriteHeader(header); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
