// Benchmark (npm run bench:sdk): lists every IP rule of a Shield site (AEGIS_BENCH_SITE_ID, 10 000
// rules, 200 a page) by raw net/http + encoding/json paging and by the SDK's auto-paging
// iterator, alternating, and prints one JSON line:
//
//	{"language":"go","items":10000,"raw_ms":[…],"sdk_ms":[…]}
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	aegis "github.com/aegis-sec/aegis-go"
)

// rawRule is what someone paging by hand would decode each rule into.
type rawRule struct {
	Livemode  bool              `json:"livemode"`
	ID        string            `json:"id"`
	SiteID    string            `json:"site_id"`
	Type      string            `json:"type"`
	Value     string            `json:"value"`
	Action    string            `json:"action"`
	Note      string            `json:"note"`
	ExpiresAt *string           `json:"expires_at"`
	Labels    map[string]string `json:"labels"`
	Status    string            `json:"status"`
	CreatedAt string            `json:"created_at"`
	UpdatedAt string            `json:"updated_at"`
}

type rawPage struct {
	Data       []rawRule `json:"data"`
	Pagination struct {
		Next *string `json:"next"`
	} `json:"pagination"`
}

func listRaw(ctx context.Context, hc *http.Client, base, key, site string) (int, error) {
	count := 0
	cursor := ""
	for {
		q := url.Values{"limit": {"200"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/shield/sites/"+url.PathEscape(site)+"/ip-access?"+q.Encode(), nil)
		if err != nil {
			return count, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return count, err
		}
		var page rawPage
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return count, fmt.Errorf("status %d", resp.StatusCode)
		}
		if err != nil {
			return count, err
		}
		count += len(page.Data)
		if page.Pagination.Next == nil || *page.Pagination.Next == "" {
			return count, nil
		}
		cursor = *page.Pagination.Next
	}
}

func listSDK(ctx context.Context, client *aegis.Client, site string) (int, error) {
	count := 0
	it := client.IPAccessRules.ListAutoPaging(ctx, site, &aegis.IPAccessRuleListQuery{Limit: aegis.Int64(200)})
	for it.Next() {
		_ = it.Current()
		count++
	}
	return count, it.Err()
}

func main() {
	base := os.Getenv("AEGIS_API_URL")
	key := os.Getenv("AEGIS_API_KEY")
	site := os.Getenv("AEGIS_BENCH_SITE_ID")
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("AEGIS_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	if base == "" || key == "" || site == "" {
		fmt.Fprintln(os.Stderr, "listiprules: set AEGIS_API_URL, AEGIS_API_KEY and AEGIS_BENCH_SITE_ID")
		os.Exit(2)
	}
	ctx := context.Background()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 16
	hc := &http.Client{Transport: transport}
	client := aegis.NewClient(aegis.WithAPIKey(key), aegis.WithBaseURL(base))

	measure := func(run func() (int, error)) (float64, int) {
		start := time.Now()
		n, err := run()
		if err != nil {
			fmt.Fprintln(os.Stderr, "listiprules:", err)
			os.Exit(1)
		}
		return float64(time.Since(start).Microseconds()) / 1000, n
	}
	raw := func() (int, error) { return listRaw(ctx, hc, base, key, site) }
	sdk := func() (int, error) { return listSDK(ctx, client, site) }

	// Warm-up: connections and caches.
	_, rawItems := measure(raw)
	_, sdkItems := measure(sdk)
	if rawItems != sdkItems {
		fmt.Fprintf(os.Stderr, "listiprules: raw saw %d items, the SDK %d\n", rawItems, sdkItems)
		os.Exit(1)
	}
	rawMs := make([]float64, 0, rounds)
	sdkMs := make([]float64, 0, rounds)
	for i := 0; i < rounds; i++ {
		ms, n := measure(raw)
		if n != rawItems {
			fmt.Fprintf(os.Stderr, "listiprules: raw saw %d items, then %d\n", rawItems, n)
			os.Exit(1)
		}
		rawMs = append(rawMs, ms)
		ms, n = measure(sdk)
		if n != rawItems {
			fmt.Fprintf(os.Stderr, "listiprules: the SDK saw %d items, raw %d\n", n, rawItems)
			os.Exit(1)
		}
		sdkMs = append(sdkMs, ms)
	}
	line, _ := json.Marshal(struct {
		Language string    `json:"language"`
		Items    int       `json:"items"`
		RawMs    []float64 `json:"raw_ms"`
		SdkMs    []float64 `json:"sdk_ms"`
	}{"go", rawItems, rawMs, sdkMs})
	fmt.Println(string(line))
}
