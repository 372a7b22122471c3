/**
 * Command-line tools the tests need beyond radosgw (see radosgw.ts for the
 * server itself), installed on demand so that the README's `npm test` on a
 * fresh Debian machine runs every test, as `.ci/run` does.
 *
 * As root with apt-get, missing tools are installed once per test run.
 * Otherwise the caller gets the reason (what is missing, the command that
 * installs it) and decides: skip with it, or fail under CI.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

/** tool → the Debian package that provides it. */
export const NETLAB_TOOLS: Readonly<Record<string, string>> = {
  unshare: "util-linux",
  nsenter: "util-linux",
  ip: "iproute2",
  tc: "iproute2",
  nft: "nftables",
};
export const TLS_TOOLS: Readonly<Record<string, string>> = { openssl: "openssl" };
/** PyTorch for Debian's /usr/bin/python3: a module, not a command, so a path it installs stands for it. */
export const TORCH_TOOLS: Readonly<Record<string, string>> = { "/usr/lib/python3/dist-packages/torch/__init__.py": "python3-torch" };

/** A command on PATH, or, for an absolute path, a file that exists (modules and data are not commands). */
function hasTool(tool: string): boolean {
  if (tool.startsWith("/")) return existsSync(tool);
  return spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
}

function missingPackages(tools: Readonly<Record<string, string>>): string[] {
  return [...new Set(Object.entries(tools).filter(([tool]) => !hasTool(tool)).map(([, pkg]) => pkg))];
}

/** Installs attempted in this process: a failed install is not retried by every suite. */
const attempted = new Map<string, string | undefined>();

/**
 * Installs the packages behind any missing tool. Returns undefined when
 * every tool is there (now), else why not, naming the install command.
 */
export function ensureDebianTools(tools: Readonly<Record<string, string>>, log: (line: string) => void = (l) => process.stderr.write(`      [apt] ${l}\n`)): string | undefined {
  const packages = missingPackages(tools);
  if (packages.length === 0) return undefined;
  const command = `apt-get install -y --no-install-recommends ${packages.join(" ")}`;
  if (attempted.has(command)) return attempted.get(command);
  let reason: string | undefined;
  if (process.platform !== "linux") reason = `missing ${packages.join(", ")} (Linux only)`;
  else if (process.getuid?.() !== 0) reason = `missing ${packages.join(", ")}; run: sudo ${command}`;
  else if (!hasTool("apt-get")) reason = `missing ${packages.join(", ")} and no apt-get to install them`;
  else {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    log(`installing ${packages.join(" ")}`);
    const update = spawnSync("apt-get", ["update", "-qq"], { env, encoding: "utf8" });
    // A failing mirror makes `apt-get update` exit non-zero although the lists we need may be fine.
    if (update.status !== 0) log(`apt-get update failed (continuing): ${update.stderr.trim().split("\n").pop()}`);
    const install = spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], { env, encoding: "utf8" });
    const still = missingPackages(tools);
    if (install.status !== 0 || still.length > 0) {
      reason = `\`${command}\` failed (exit ${install.status}): ${install.stderr.trim().split("\n").slice(-3).join(" / ")}`;
    } else log(`installed ${packages.join(" ")}`);
  }
  attempted.set(command, reason);
  return reason;
}
