import type { Argv } from "yargs";
import { UsageError } from "../../plan/location.js";
import { declarePositional } from "../option-table.js";
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from "../completion-scripts.js";

/**
 * `s3x completion [SHELL]`: prints the tab completion script. Answering the
 * script's requests (`s3x __complete WORD…`) is cli/completion.ts's.
 */

/** The first argument of a completion request (never a command name or a path a user types). */
export const COMPLETE_REQUEST = "__complete";

export function completionBuilder(y: Argv) {
  return declarePositional(y, "shell", "completion", `${COMPLETION_SHELLS.join(", ")} (default: from $SHELL, else bash)`);
}

/** The script, for the shell named or the user's login shell ($SHELL). */
export function runCompletion(shell: string | undefined): number {
  const chosen = shell ?? guessShell(process.env.SHELL);
  if (!isShell(chosen)) throw new UsageError(`unknown shell "${chosen}": give one of ${COMPLETION_SHELLS.join(", ")}`);
  process.stdout.write(completionScript(chosen));
  return 0;
}

function isShell(name: string): name is CompletionShell {
  return (COMPLETION_SHELLS as readonly string[]).includes(name);
}

function guessShell(loginShell: string | undefined): CompletionShell {
  const name = loginShell?.split("/").pop() ?? "";
  return isShell(name) ? name : "bash";
}
