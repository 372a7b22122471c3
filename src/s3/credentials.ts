import { readFile } from "node:fs/promises";
import { loadSharedConfigFiles } from "@smithy/shared-ini-file-loader";

/**
 * Credential failures that say what failed, as aws-cli does.
 *
 * The SDK's credential chain tries provider after provider and, when none
 * delivers, reports only the last one's complaint: a `credential_process`
 * that printed "SSO token expired" and exited 1, a web identity token file
 * that is not there, or a role whose `source_profile` does not exist all
 * came out as "Unable to locate credentials". Here the profile's own
 * provider is found as botocore finds it (role_arn with web_identity_token_file
 * or source_profile, then SSO, then the credentials file's keys, then
 * credential_process) and its failure is reported as such, naming the
 * profile and the provider. `credential_process` is run here (the SDK's
 * runner drops the process's stderr and exit code); the other providers
 * stay the SDK's, checked first for what aws-cli checks before calling them.
 */
export class CredentialSourceError extends Error {
  override readonly name = "CredentialSourceError";
  readonly code = "S3X_CREDENTIALS";
}

/** The SDK's credential provider shape (the client's `config.credentials`). */
export type CredentialProvider = (options?: { forceRefresh?: boolean }) => Promise<ProcessCredentials>;

interface ProcessCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

type Section = Record<string, string | undefined>;

interface Profiles {
  config: Record<string, Section | undefined>;
  credentials: Record<string, Section | undefined>;
}

/** How a profile gets its credentials, in botocore's order of precedence. */
type Source =
  | { kind: "web identity"; tokenFile: string }
  | { kind: "assume role"; sourceProfile: string }
  | { kind: "SSO"; session?: string }
  | { kind: "credential_process"; command: string }
  | { kind: "other" };

function sourceOf(name: string, profiles: Profiles): Source {
  const fromCredentials = profiles.credentials[name] ?? {};
  const section: Section = { ...profiles.config[name], ...fromCredentials };
  if (section.role_arn && section.web_identity_token_file) return { kind: "web identity", tokenFile: section.web_identity_token_file };
  if (section.role_arn && section.source_profile) return { kind: "assume role", sourceProfile: section.source_profile };
  if (section.role_arn) return { kind: "other" };
  if (section.sso_session || section.sso_start_url) return { kind: "SSO", session: section.sso_session };
  // Keys in the credentials file come before credential_process; keys in the config file after it.
  if (fromCredentials.aws_access_key_id) return { kind: "other" };
  if (section.credential_process) return { kind: "credential_process", command: section.credential_process };
  return { kind: "other" };
}

/**
 * Wraps the client's credential provider (`sdkChain`) for the profile the
 * command uses (`profile`, as cli/aws-config resolved it from --profile or
 * $AWS_PROFILE; else "default"), so that its
 * failures name the profile and the provider. Reads the shared files
 * ($AWS_CONFIG_FILE, $AWS_SHARED_CREDENTIALS_FILE) once, on first use.
 */
export function explainedCredentials(sdkChain: CredentialProvider, profile: string | undefined, env: NodeJS.ProcessEnv = process.env): CredentialProvider {
  const name = profile ?? "default";
  let provider: Promise<CredentialProvider> | undefined;
  const resolve = async (): Promise<CredentialProvider> => {
    const files = await loadSharedConfigFiles({ configFilepath: env.AWS_CONFIG_FILE || undefined, filepath: env.AWS_SHARED_CREDENTIALS_FILE || undefined });
    const profiles: Profiles = { config: files.configFile, credentials: files.credentialsFile };
    const source = sourceOf(name, profiles);
    if (source.kind === "credential_process") return processCredentials(name, source.command, env);
    if (source.kind === "other") return sdkChain;
    await checkBeforeCalling(name, source, profiles);
    return async (options) => {
      try {
        return await sdkChain(options);
      } catch (err) {
        throw explained(name, source, err);
      }
    };
  };
  return async (options) => (await (provider ??= resolve()))(options);
}

/** What aws-cli checks before asking STS or SSO: a token file it can read, a source profile that exists. */
async function checkBeforeCalling(name: string, source: Source, profiles: Profiles, seen = new Set<string>()): Promise<void> {
  seen.add(name);
  if (source.kind === "web identity") {
    await readFile(source.tokenFile).catch((err: NodeJS.ErrnoException) => {
      throw new CredentialSourceError(`profile ${name}: web identity (web_identity_token_file): cannot read ${source.tokenFile}: ${errnoText(err)}`);
    });
  } else if (source.kind === "assume role") {
    const next = source.sourceProfile;
    if (!profiles.config[next] && !profiles.credentials[next]) {
      throw new CredentialSourceError(`profile ${name}: assume role (role_arn): its source_profile "${next}" does not exist in the config or credentials file`);
    }
    // A chain of roles: each link's source must exist too (a profile may name itself once, for its own keys).
    if (seen.has(next)) return;
    await checkBeforeCalling(next, sourceOf(next, profiles), profiles, seen);
  }
}

/** The SDK's complaint, with the profile and provider it concerns (a generic "no provider" stays as it is). */
function explained(name: string, source: Source, err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof CredentialSourceError || /could not load credentials from any providers/i.test(err.message)) return err;
  const detail = err.message.split("\n")[0];
  const what = source.kind === "SSO" ? `SSO${source.session ? ` (sso_session ${source.session})` : ""}` : source.kind === "assume role" ? "assume role (role_arn)" : `${source.kind}`;
  return new CredentialSourceError(`profile ${name}: ${what}: ${detail}`, { cause: err });
}

/**
 * Runs the profile's `credential_process` (through the shell, as the SDK
 * did) and reads its JSON as aws-cli does: Version 1, AccessKeyId,
 * SecretAccessKey, optional SessionToken and Expiration. Credentials are
 * kept until a minute before they expire; a failure is kept too (every
 * request of the run would meet it).
 */
function processCredentials(name: string, command: string, env: NodeJS.ProcessEnv): CredentialProvider {
  let current: Promise<ProcessCredentials> | undefined;
  return async (options) => {
    const held = current && (await current.catch(() => undefined));
    const fresh = held && !options?.forceRefresh && (!held.expiration || held.expiration.getTime() - Date.now() > 60_000);
    if (!current || (held && !fresh)) current = runProcess(name, command, env);
    return current;
  };
}

function runProcess(name: string, command: string, env: NodeJS.ProcessEnv): Promise<ProcessCredentials> {
  const failed = (what: string): CredentialSourceError => new CredentialSourceError(`profile ${name}: credential_process "${command}" ${what}`);
  return new Promise((resolve, reject) => {
    // node:child_process is loaded here, for the profiles that run a process: not at every start.
    process.getBuiltinModule("node:child_process").exec(command, { env, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      const said = oneLine(stderr);
      if (err) {
        const exit = typeof err.code === "number" ? `exited with code ${err.code}` : err.signal ? `was killed by ${err.signal}` : `could not run (${err.message})`;
        return reject(failed(`${exit}${said ? `: ${said}` : ""}`));
      }
      const alsoSaid = said ? ` (stderr: ${said})` : "";
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        // Not the output itself: it may hold a secret.
        return reject(failed(`printed ${Buffer.byteLength(stdout)} bytes that are not JSON${alsoSaid}`));
      }
      if (typeof data !== "object" || data === null) return reject(failed(`printed JSON that is not an object${alsoSaid}`));
      if (data.Version !== 1) return reject(failed(`printed Version ${JSON.stringify(data.Version)}; only Version 1 is supported${alsoSaid}`));
      const missing = ["AccessKeyId", "SecretAccessKey"].filter((key) => typeof data[key] !== "string" || data[key] === "");
      if (missing.length > 0) return reject(failed(`printed JSON without ${missing.join(" and ")}${alsoSaid}`));
      const expiration = typeof data.Expiration === "string" ? new Date(data.Expiration) : undefined;
      if (expiration && Number.isNaN(expiration.getTime())) return reject(failed(`printed an Expiration that is not a date: ${data.Expiration as string}`));
      if (expiration && expiration.getTime() <= Date.now()) return reject(failed(`printed credentials that expired at ${expiration.toISOString()}`));
      resolve({
        accessKeyId: data.AccessKeyId as string,
        secretAccessKey: data.SecretAccessKey as string,
        ...(typeof data.SessionToken === "string" && data.SessionToken ? { sessionToken: data.SessionToken } : {}),
        ...(expiration ? { expiration } : {}),
      });
    });
  });
}

/** A process's stderr on one line (messages are one line each). */
function oneLine(text: string): string {
  const line = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" | ");
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
}

function errnoText(err: NodeJS.ErrnoException): string {
  if (err.code === "ENOENT") return "no such file";
  if (err.code === "EACCES") return "permission denied";
  if (err.code === "EISDIR") return "is a directory";
  return err.code ?? err.message;
}
