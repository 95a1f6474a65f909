// What the bundles take for @aws-sdk/credential-provider-node (infra/esbuild-plugins.cjs): the
// environment's credentials only. Lambda puts the execution role's credentials in the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) before the function starts, so the
// default chain's other links (SSO, profiles, processes, web identity, container and instance
// metadata) are never reached there; bundled, they were chunks, and the Query and XML protocols one of
// them shares with the clients were loaded at every cold start (BENCHMARKS.md, "bundles").
import { fromEnv } from "@aws-sdk/credential-provider-env";

export const defaultProvider = (init = {}) => fromEnv(init);
export const credentialsWillNeedRefresh = (credentials) => credentials?.expiration !== undefined;
export const credentialsTreatedAsExpired = (credentials) => credentials?.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 300000;
