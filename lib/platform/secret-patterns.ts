/**
 * Well-known secret formats, mirrored from the rules of @secretlint/secretlint-rule-preset-recommend
 * (v12; rule names below). secretlint itself is not a dependency: it is asynchronous, about 0.75 ms per
 * 1 KB of text and 78 KB minified, where the poller redacts every field of every record synchronously
 * (docs/security.md has the figures). Where a rule matches a format exactly, its pattern is kept; where
 * a rule only reports a prefix or a fixed length, the pattern is a little wider, because redacting a
 * look-alike costs nothing and missing a variant leaks it.
 */

export interface SecretPattern {
  /** What `[redacted:<kind>]` says was removed. */
  kind: string;
  /** The secretlint rule this mirrors. */
  rule: string;
  /** Matches the secret only. */
  source: string;
  /** Literals one of which the secret holds: a text with none of them is not searched (speed). */
  hints?: string[];
}

/** Not preceded by a character that would make the match the tail of a longer word. */
const START = "(?<![A-Za-z0-9_])";
const END = "(?![A-Za-z0-9_])";

export const TOKEN_PATTERNS: SecretPattern[] = [
  { kind: "aws-key", rule: "secretlint-rule-aws (AWSAccessKeyID)", source: `\\b(?:A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}\\b` },
  { kind: "github-token", rule: "secretlint-rule-github", hints: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], source: `${START}(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{30,255}${END}` },
  { kind: "github-token", rule: "secretlint-rule-github (fine-grained)", hints: ["github_pat_"], source: `${START}github_pat_[A-Za-z0-9_]{22,255}${END}` },
  { kind: "slack-token", rule: "secretlint-rule-slack", hints: ["xox", "xapp-"], source: `\\b(?:xoxb|xoxp|xapp|xoxa|xoxo|xoxr|xoxe|xoxs)-(?:\\d-)?(?:[a-zA-Z0-9]{1,80}-){1,6}[a-zA-Z0-9]{1,80}\\b` },
  { kind: "npm-token", rule: "secretlint-rule-npm", hints: ["npm_"], source: `${START}npm_[A-Za-z0-9_]{36}${END}` },
  { kind: "api-key", rule: "secretlint-rule-openai / secretlint-rule-anthropic", hints: ["sk-"], source: `${START}sk-(?:proj-|svcacct-|admin-|ant-[a-z]+\\d*-)?[A-Za-z0-9_-]{20,300}` },
  { kind: "api-key", rule: "secretlint-rule-groq", hints: ["gsk_"], source: `${START}gsk_[a-zA-Z0-9]{52}${END}` },
  { kind: "api-key", rule: "secretlint-rule-huggingface", hints: ["hf_"], source: `${START}hf_[a-zA-Z]{34}${END}` },
  { kind: "api-key", rule: "secretlint-rule-linear", hints: ["lin_api_"], source: `${START}lin_api_[a-zA-Z0-9_]{32,128}${END}` },
  { kind: "api-key", rule: "secretlint-rule-notion", hints: ["ntn_"], source: `${START}ntn_[0-9]{11}[A-Za-z0-9]{35}${END}` },
  { kind: "api-key", rule: "secretlint-rule-sendgrid", hints: ["SG."], source: `${START}SG\\.[\\w-]{16,128}\\.[\\w-]{16,128}${END}` },
  { kind: "api-key", rule: "secretlint-rule-shopify", hints: ["shp"], source: `${START}(?:shppa|shpca|shpat|shpss)_[a-zA-Z0-9]{32,64}${END}` },
  { kind: "gitlab-token", rule: "secretlint-rule-gitlab", hints: ["glpat-"], source: `${START}glpat-[A-Za-z0-9_-]{20,128}` },
  { kind: "api-key", rule: "secretlint-rule-grafana", hints: ["glc_", "glsa_"], source: `${START}(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})` },
  { kind: "api-key", rule: "secretlint-rule-1password", hints: ["ops_ey"], source: `${START}ops_ey[A-Za-z0-9+/=]{100,1280}` },
  { kind: "vault-token", rule: "secretlint-rule-hashicorp-vault", hints: ["hvs.", "hvb.", "hvr."], source: `${START}hv[sbr]\\.[A-Za-z0-9_-]{90,300}` },
  { kind: "api-key", rule: "secretlint-rule-vercel", hints: ["vcp_", "vci_", "vca_", "vcr_", "vck_"], source: `${START}(?:vcp|vci|vca|vcr|vck)_[A-Za-z0-9]{20,60}${END}` },
  { kind: "api-key", rule: "secretlint-rule-databricks", hints: ["dapi"], source: `${START}dapi[A-Fa-f0-9]{32}(?:-[0-9])?${END}` },
  { kind: "api-key", rule: "secretlint-rule-docker", hints: ["dckr_pat_"], source: `${START}dckr_pat_[a-zA-Z0-9_-]{27,}` },
  { kind: "api-key", rule: "secretlint-rule-figma", hints: ["figd_"], source: `${START}figd_[A-Za-z0-9_-]{40,200}` },
];

/**
 * An AWS secret access key is 40 characters of base64 with no prefix (secretlint-rule-aws,
 * AWSSecretAccessKey, unlabelled too). Runs of base64 are found first, and only a run of exactly 40
 * that mixes upper- and lower-case letters is one: a commit sha (hex, one case) or a uuid is not.
 */
export const BASE64_RUN = /(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40,}=*/g;
export const isAwsSecret = (run: string): boolean => run.length === 40 && /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9/+]/.test(run);

/**
 * A PEM private key (secretlint-rule-privatekey): from its header to its end line, or, when clipped,
 * from its header on while the text looks like key material. Read by redactPrivateKeys in one pass.
 */
export const PEM_BEGIN = /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
export const PEM_END = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
/**
 * Key material after a header: base64 lines (64 characters; 16 is enough to tell them from words) with
 * raw or JSON-escaped newlines between, and a last short line where the text was clipped.
 */
export const PEM_MATERIAL = /(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]{16,})*(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]+(?=…|\.\.\.|$))?/y;
/** An RSA-8192 key is under 7 KB: an end line further than this belongs to something else. */
export const PEM_MAX_BYTES = 16_384;

/** A Slack incoming-webhook URL, with or without its scheme: its path is the secret (secretlint-rule-slack). */
export const SLACK_WEBHOOK = /(?:https?:\/\/)?hooks\.slack(?:-gov)?\.com\/(?:services|workflows|triggers)\/[^\s"'<>`]+/gi;
