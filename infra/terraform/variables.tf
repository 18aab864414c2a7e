variable "region" {
  description = "AWS region of the bucket and the secret."
  type        = string
  default     = "eu-central-1"
}

variable "name" {
  description = "Name prefix of the IAM policy, role and secret."
  type        = string
  default     = "halluwatch"
}

variable "bucket_name" {
  description = "The bucket holding the agent sessions (under sessions_prefix) and halluwatch's results (under results_prefix)."
  type        = string
}

variable "create_bucket" {
  description = "Create the bucket here; false when the sessions bucket already exists (then only its lifecycle rules for results are managed)."
  type        = bool
  default     = true
}

variable "sessions_prefix" {
  description = "Key prefix of the sessions (the config's sessions.layout starts below it)."
  type        = string
  default     = "sessions/"

  validation {
    condition     = length(var.sessions_prefix) > 1 && endswith(var.sessions_prefix, "/")
    error_message = "sessions_prefix must be a non-empty prefix ending in '/': the job is never given the whole bucket."
  }
}

variable "results_prefix" {
  description = "Key prefix of the results store (the config's results.prefix)."
  type        = string
  default     = "halluwatch/"

  validation {
    condition     = length(var.results_prefix) > 1 && endswith(var.results_prefix, "/")
    error_message = "results_prefix must be a non-empty prefix ending in '/': the job never writes bucket-wide."
  }
}

variable "detail_tables" {
  description = "Per-row result tables (<results_prefix><table>/date=.../) expired after detail_retention_days."
  type        = list(string)
  default     = ["sessions", "signals", "failures", "audit", "metrics", "anomalies"]
}

variable "summary_tables" {
  description = "Result tables kept for summary_retention_days: the manifests (which commit each day) and findings."
  type        = list(string)
  default     = ["manifests", "findings", "findings_detail", "comparisons"]
}

variable "detail_retention_days" {
  description = "Days to keep the per-row result tables (their date= parts)."
  type        = number
  default     = 90
}

variable "summary_retention_days" {
  description = "Days to keep manifests and findings; longer than the detail tables and than findings.history_days."
  type        = number
  default     = 730
}

variable "sessions_retention_days" {
  description = "Days to keep the agent sessions themselves; null keeps them (another team may own them)."
  type        = number
  default     = null
}

variable "secret_keys" {
  description = "Names of the keys the job reads from the secret (set their values outside Terraform)."
  type        = list(string)
  default = [
    "SLACK_WEBHOOK_URL",
    "SLACK_BOT_TOKEN",
    "SMTP_USERNAME",
    "SMTP_PASSWORD",
    "WEBHOOK_SECRET",
    "OPENAI_API_KEY",
  ]
}

variable "job_role_trust_services" {
  description = "AWS services allowed to assume the job's role (ECS tasks, EC2 for a VM worker)."
  type        = list(string)
  default     = ["ecs-tasks.amazonaws.com"]
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = { app = "halluwatch" }
}
