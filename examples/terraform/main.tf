# Every Aegis resource and data source. Credentials come from AEGIS_API_URL / AEGIS_API_KEY.
terraform {
  required_providers {
    aegis = { source = "aegis/aegis" }
  }
}

provider "aegis" {}

resource "aegis_shield_site" "shop" {
  domain     = "shop.example.com"
  origin_url = "https://origin.shop.example.com"
  mode       = "block"
  path_case  = "insensitive"
  labels     = { team = "storefront" }

  # Left out, managed rules stay as the API has them (on at paranoia level 1 for a new site).
  managed_rules = {
    paranoia_level = 2
    exclusions = [
      { rules = ["sqli.tautology"], url_pattern = "/cms/*" },
    ]
  }

  # Left out, TLS stays as the API has it (for a new site: ACME when the server has a TLS port, else off).
  tls = {
    mode          = "acme"
    redirect_http = true
    hsts          = { max_age = 31536000 }
  }
}

resource "aegis_virtual_patch" "search_sqli" {
  site_id         = aegis_shield_site.shop.id
  url_pattern     = "/search"
  method          = "GET"
  match_param     = "q"
  match_regex     = "(?i)union\\s+select"
  action          = "block"
  expires_in_days = 30
}

resource "aegis_ip_access_rule" "office" {
  site_id = aegis_shield_site.shop.id
  type    = "cidr"
  value   = "198.51.100.0/24"
  action  = "allow"
  note    = "head office"
}

resource "aegis_ip_access_rule" "bulletproof_hosting" {
  site_id = aegis_shield_site.shop.id
  type    = "asn"
  value   = "AS64511"
  action  = "challenge"
}

resource "aegis_rate_limit_rule" "login" {
  site_id                  = aegis_shield_site.shop.id
  identity                 = "ip"
  url_pattern              = "/login"
  method                   = "POST"
  budget                   = 10
  window_seconds           = 60
  action                   = "block"
  escalate_to_deny_minutes = 15
}

resource "aegis_shield_schema" "shop" {
  site_id    = aegis_shield_site.shop.id
  document   = file("${path.module}/openapi.yaml")
  strictness = "standard"
}

resource "aegis_scan_schedule" "nightly" {
  name      = "Nightly DAST of the shop"
  scan_type = "dast"
  target    = "https://shop.example.com"
  cron      = "0 3 * * *"
  timezone  = "Europe/Amsterdam"
}

resource "aegis_webhook" "alerts" {
  url         = "https://hooks.example.com/aegis"
  events      = ["vulnerability.created", "shield.block"]
  description = "Security channel"
}

data "aegis_shield_site" "shop" {
  domain     = aegis_shield_site.shop.domain
  depends_on = [aegis_shield_site.shop]
}

data "aegis_shield_sites" "all" {
  depends_on = [aegis_shield_site.shop]
}

output "shop_site_id" {
  value = data.aegis_shield_site.shop.id
}

output "webhook_secret" {
  value     = aegis_webhook.alerts.secret
  sensitive = true
}
