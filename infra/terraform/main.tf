# halluwatch on AWS: the bucket layout, lifecycle of the results, the job's least-privilege IAM
# policy and role, and the Secrets Manager secret for the alert and judge credentials.
#
#   s3://<bucket_name>/<sessions_prefix>...                 agent sessions (read only)
#   s3://<bucket_name>/<results_prefix><table>/date=D/...   halluwatch results (read and write)
#
# No secret value is set here: put them with
#   aws secretsmanager put-secret-value --secret-id halluwatch/credentials --secret-string file://creds.json

terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}

provider "aws" {
  region = var.region
}

locals {
  bucket_id = var.create_bucket ? aws_s3_bucket.data[0].id : var.bucket_name
}

# ---------------------------------------------------------------------------- bucket layout

resource "aws_s3_bucket" "data" {
  count  = var.create_bucket ? 1 : 0
  bucket = var.bucket_name
  tags   = var.tags
}

resource "aws_s3_bucket_public_access_block" "data" {
  count                   = var.create_bucket ? 1 : 0
  bucket                  = aws_s3_bucket.data[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "data" {
  count  = var.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.data[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

# S3 lifecycle filters take a literal prefix (no wildcards), so one rule per result table:
# <results_prefix><table>/ holds only that table's date=... parts.
resource "aws_s3_bucket_lifecycle_configuration" "data" {
  bucket = local.bucket_id

  dynamic "rule" {
    for_each = toset(var.detail_tables)
    content {
      id     = "results-${rule.value}-expire"
      status = "Enabled"
      filter {
        prefix = "${var.results_prefix}${rule.value}/date="
      }
      expiration {
        days = var.detail_retention_days
      }
    }
  }

  dynamic "rule" {
    for_each = toset(var.summary_tables)
    content {
      id     = "results-${rule.value}-keep-longer"
      status = "Enabled"
      filter {
        prefix = "${var.results_prefix}${rule.value}/"
      }
      expiration {
        days = var.summary_retention_days
      }
    }
  }

  dynamic "rule" {
    for_each = var.sessions_retention_days == null ? [] : [var.sessions_retention_days]
    content {
      id     = "sessions-expire"
      status = "Enabled"
      filter {
        prefix = var.sessions_prefix
      }
      expiration {
        days = rule.value
      }
    }
  }

  rule {
    id     = "abort-incomplete-uploads"
    status = "Enabled"
    filter {
      prefix = ""
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = 2
    }
  }
}

# ---------------------------------------------------------------------------- IAM

# List and read the sessions; read, write and delete under the results prefix; nothing else.
resource "aws_iam_policy" "job" {
  name        = "${var.name}-job"
  description = "halluwatch nightly job: read sessions, read/write its results prefix."
  policy = templatefile("${path.module}/policy.json.tftpl", {
    bucket          = var.bucket_name
    sessions_prefix = var.sessions_prefix
    results_prefix  = var.results_prefix
  })
  tags = var.tags
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = var.job_role_trust_services
    }
  }
}

resource "aws_iam_role" "job" {
  name               = "${var.name}-job"
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy_attachment" "job" {
  role       = aws_iam_role.job.name
  policy_arn = aws_iam_policy.job.arn
}

# ---------------------------------------------------------------------------- secrets

# One JSON secret whose keys are var.secret_keys; values are set outside Terraform, so they
# never reach the state. ECS injects them as environment variables (`secrets` of the task
# definition, read by the task execution role with the policy below).
resource "aws_secretsmanager_secret" "credentials" {
  name        = "${var.name}/credentials"
  description = "halluwatch alert and judge credentials; JSON keys: ${join(", ", var.secret_keys)}"
  tags        = var.tags
}

data "aws_iam_policy_document" "read_secret" {
  statement {
    sid       = "ReadHalluwatchCredentials"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.credentials.arn]
  }
}

resource "aws_iam_policy" "read_secret" {
  name        = "${var.name}-read-credentials"
  description = "Read the halluwatch credentials secret (attach to the ECS task execution role)."
  policy      = data.aws_iam_policy_document.read_secret.json
  tags        = var.tags
}
