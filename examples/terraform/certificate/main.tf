# A site served over HTTPS with a certificate you bring (tls.mode "custom"), separate from ../main.tf
# because it needs files of your own. Terraform 1.11 or later: the private key is a write-only
# argument, so it is never written to the plan or the state (the state keeps its SHA-256 only).
#
#   mkdir -p certs && cp /path/to/fullchain.pem certs/shop.crt   # the chain is public: commit it if you like
#   export TF_VAR_shop_private_key="$(cat /secure/place/shop.key)" # the key is not: never commit it
#   terraform init && terraform apply
terraform {
  required_version = ">= 1.11"
  required_providers {
    aegis = { source = "aegis/aegis" }
  }
}

provider "aegis" {}

# Ephemeral: Terraform keeps it out of the plan and the state too.
variable "shop_private_key" {
  type        = string
  sensitive   = true
  ephemeral   = true
  description = "PEM private key of certs/shop.crt."
}

resource "aegis_shield_site" "secure_shop" {
  domain     = "secure.shop.example.com"
  origin_url = "https://origin.shop.example.com"
  mode       = "block"

  tls = {
    mode          = "custom"
    redirect_http = true
    min_version   = "1.2"
  }
}

resource "aegis_shield_certificate" "secure_shop" {
  site_id = aegis_shield_site.secure_shop.id
  # Leaf first, then the intermediates. Renewing it: replace the file (and the key) and apply.
  certificate = file("${path.module}/certs/shop.crt")
  private_key = var.shop_private_key
}

output "certificate_expires" {
  value = aegis_shield_certificate.secure_shop.not_after
}
