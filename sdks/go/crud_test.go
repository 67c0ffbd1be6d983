package aegis

import (
	"strings"
	"testing"
)

func TestShieldSiteCRUD(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	domain := unique("crud") + ".example.com"
	site, err := c.ShieldSites.Create(ctx, ShieldSiteCreateParams{Domain: domain, OriginURL: "http://127.0.0.1:9", Mode: ShieldSiteCreateParamsModeLog, Labels: map[string]string{"team": "go"}})
	if err != nil {
		t.Fatal(err)
	}
	if site.Domain != domain || site.ID == "" {
		t.Fatalf("created %+v", site)
	}
	got, err := c.ShieldSites.Get(ctx, site.ID)
	if err != nil || got.ID != site.ID {
		t.Fatalf("get: %v %+v", err, got)
	}
	mode := ShieldSiteUpdateParamsModeBlock
	updated, err := c.ShieldSites.Update(ctx, site.ID, ShieldSiteUpdateParams{Mode: &mode})
	if err != nil || string(updated.Mode) != "block" {
		t.Fatalf("update: %v %+v", err, updated)
	}
	found := false
	it := c.ShieldSites.ListAutoPaging(ctx, nil)
	for it.Next() {
		if it.Current().ID == site.ID {
			found = true
		}
	}
	if it.Err() != nil || !found {
		t.Fatalf("list: %v, found %v", it.Err(), found)
	}
	if err := c.ShieldSites.Delete(ctx, site.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ShieldSites.Get(ctx, site.ID); !IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestIPAccessRuleCRUD(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	rule, err := c.IPAccessRules.Create(ctx, site.ID, IPAccessRuleCreateParams{Type: IPAccessRuleCreateParamsTypeIP, Value: "203.0.113.7", Action: IPAccessRuleCreateParamsActionDeny, Note: String("from go")})
	if err != nil {
		t.Fatal(err)
	}
	if rule.Value != "203.0.113.7" || rule.Note != "from go" || rule.SiteID != site.ID {
		t.Fatalf("created %+v", rule)
	}
	got, err := c.IPAccessRules.Get(ctx, site.ID, rule.ID)
	if err != nil || got.ID != rule.ID {
		t.Fatalf("get: %v", err)
	}
	updated, err := c.IPAccessRules.Update(ctx, site.ID, rule.ID, IPAccessRuleUpdateParams{Note: String("changed")})
	if err != nil || updated.Note != "changed" {
		t.Fatalf("update: %v %+v", err, updated)
	}
	page, err := c.IPAccessRules.List(ctx, site.ID, nil)
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("list: %v %+v", err, page)
	}
	if err := c.IPAccessRules.Delete(ctx, site.ID, rule.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.IPAccessRules.Get(ctx, site.ID, rule.ID); !IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestVirtualPatchCRUD(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	patch, err := c.VirtualPatches.Create(ctx, site.ID, VirtualPatchCreateParams{URLPattern: "/search", Method: VirtualPatchCreateParamsMethodGet, MatchParam: "q", MatchRegex: "(?i)union\\s+select"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.VirtualPatches.Get(ctx, site.ID, patch.ID)
	if err != nil || got.ID != patch.ID || got.MatchParam != "q" {
		t.Fatalf("get: %v %+v", err, got)
	}
	updated, err := c.VirtualPatches.Update(ctx, site.ID, patch.ID, VirtualPatchUpdateParams{Labels: map[string]string{"ticket": "sec-1"}})
	if err != nil || updated.Labels["ticket"] != "sec-1" {
		t.Fatalf("update: %v %+v", err, updated)
	}
	page, err := c.VirtualPatches.List(ctx, site.ID, nil)
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("list: %v", err)
	}
	if err := c.VirtualPatches.Delete(ctx, site.ID, patch.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.VirtualPatches.Get(ctx, site.ID, patch.ID); !IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestRateLimitRuleCRUD(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	rule, err := c.RateLimitRules.Create(ctx, site.ID, RateLimitRuleCreateParams{Identity: "ip", URLPattern: "/login", Method: RateLimitRuleCreateParamsMethodPost, Budget: 10, WindowSeconds: 60, Action: RateLimitRuleCreateParamsActionBlock})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.RateLimitRules.Get(ctx, site.ID, rule.ID)
	if err != nil || got.Budget != 10 {
		t.Fatalf("get: %v %+v", err, got)
	}
	updated, err := c.RateLimitRules.Update(ctx, site.ID, rule.ID, RateLimitRuleUpdateParams{Budget: Int64(20)})
	if err != nil || updated.Budget != 20 {
		t.Fatalf("update: %v %+v", err, updated)
	}
	page, err := c.RateLimitRules.List(ctx, site.ID, nil)
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("list: %v", err)
	}
	if err := c.RateLimitRules.Delete(ctx, site.ID, rule.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RateLimitRules.Get(ctx, site.ID, rule.ID); !IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestScanScheduleCRUD(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	schedule, err := c.ScanSchedules.Create(ctx, ScanScheduleCreateParams{Name: unique("nightly"), ScanType: ScanScheduleCreateParamsScanTypeDast, Target: "https://app.example.com", Cron: "0 3 * * *", Enabled: Bool(false)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ScanSchedules.Get(ctx, schedule.ID)
	if err != nil || got.Cron != "0 3 * * *" {
		t.Fatalf("get: %v %+v", err, got)
	}
	updated, err := c.ScanSchedules.Update(ctx, schedule.ID, ScanScheduleUpdateParams{Cron: String("0 4 * * *")})
	if err != nil || updated.Cron != "0 4 * * *" {
		t.Fatalf("update: %v %+v", err, updated)
	}
	found := false
	it := c.ScanSchedules.ListAutoPaging(ctx, nil)
	for it.Next() {
		found = found || it.Current().ID == schedule.ID
	}
	if it.Err() != nil || !found {
		t.Fatalf("list: %v %v", it.Err(), found)
	}
	if err := c.ScanSchedules.Delete(ctx, schedule.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ScanSchedules.Get(ctx, schedule.ID); !IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestWebhookCRUD(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	created, err := c.Webhooks.Create(ctx, WebhookCreateParams{URL: "http://127.0.0.1:9/hook", Events: []WebhookCreateParamsEvent{WebhookCreateParamsEventVulnerabilityCreated}, Description: String("go sdk")})
	if err != nil {
		t.Fatal(err)
	}
	if created.ID == "" || !strings.HasPrefix(created.Secret, "whsec_") {
		t.Fatalf("created %+v", created)
	}
	got, err := c.Webhooks.Get(ctx, created.ID)
	if err != nil || got.URL != "http://127.0.0.1:9/hook" {
		t.Fatalf("get: %v %+v", err, got)
	}
	updated, err := c.Webhooks.Update(ctx, created.ID, WebhookUpdateParams{Description: String("changed")})
	if err != nil || updated.Description != "changed" {
		t.Fatalf("update: %v %+v", err, updated)
	}
	if _, err := c.Webhooks.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Webhooks.Delete(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Webhooks.Get(ctx, created.ID); !IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

const testSchemaYAML = `openapi: 3.0.3
info:
  title: Shop
  version: "1"
paths:
  /search:
    get:
      parameters:
        - name: q
          in: query
          schema:
            type: string
      responses:
        "200":
          description: ok
`

func TestShieldSchemaUploadGetDelete(t *testing.T) {
	c := newTestClient()
	ctx := testContext(t)
	site := newSite(t, c)
	schema, err := c.ShieldSchema.Upload(ctx, site.ID, strings.NewReader(testSchemaYAML), "application/yaml")
	if err != nil {
		t.Fatal(err)
	}
	if schema.Hash == "" {
		t.Fatalf("uploaded %+v", schema)
	}
	got, err := c.ShieldSchema.Get(ctx, site.ID)
	if err != nil || got.Hash != schema.Hash {
		t.Fatalf("get: %v %+v", err, got)
	}
	// JSON text is the other form of the same upload.
	if _, err := c.ShieldSchema.Upload(ctx, site.ID, strings.NewReader(`{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`), "application/json"); err != nil {
		t.Fatalf("json upload: %v", err)
	}
	if err := c.ShieldSchema.Delete(ctx, site.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ShieldSchema.Get(ctx, site.ID); !IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}
