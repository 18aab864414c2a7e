output "sessions_config" {
  description = "sessions.location and sessions.layout for the run config."
  value       = { location = "s3://${var.bucket_name}", layout = "${var.sessions_prefix}{date:%Y/%m/%d}/" }
}

output "results_location" {
  description = "results.location and results.prefix for the run config."
  value       = { location = "s3://${var.bucket_name}", prefix = var.results_prefix }
}

output "job_role_arn" {
  description = "Role of the job (ECS task role, or instance profile of a VM worker)."
  value       = aws_iam_role.job.arn
}

output "job_policy_arn" {
  value = aws_iam_policy.job.arn
}

output "credentials_secret_arn" {
  description = "Secrets Manager secret holding the keys in var.secret_keys."
  value       = aws_secretsmanager_secret.credentials.arn
}

output "read_credentials_policy_arn" {
  value = aws_iam_policy.read_secret.arn
}
