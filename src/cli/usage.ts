/**
 * Turns yargs's complaints about a command line into one line that names
 * the word at fault and, when it is plausibly a typo, the word meant:
 * `unknown option --exlude (did you mean --exclude?)`,
 * `unknown command "snyc" (did you mean sync?)`.
 */

/** `aws s3` commands: one s3x lacks is not a typo of another (`mv` is not `mb`). */
const AWS_S3_COMMANDS = ["cp", "mv", "rm", "sync", "ls", "mb", "rb", "presign", "website"];

export interface ParserVocabulary {
  /** The commands s3x has. */
  commands: readonly string[];
  /** Every option name and alias the command (or s3x, before a command) accepts, without dashes. */
  options: readonly string[];
}

export function explainUsageError(message: string, argv: readonly string[], known: ParserVocabulary): string {
  const unknown = /^Unknown arguments?: (.*)$/s.exec(message);
  if (!unknown) return message;
  const words = unknown[1].split(", ").map((w) => w.replace(/^"(.*)"$/, "$1"));
  const commandGiven = argv.some((a) => known.commands.includes(a));
  const explained = words.map((word) => explainWord(word, argv, commandGiven, known));
  // Without a command, the words after the unknown one are its arguments: name the command only.
  return explained.find((line) => line.includes(" command")) ?? explained.join("; ");
}

function explainWord(word: string, argv: readonly string[], commandGiven: boolean, known: ParserVocabulary): string {
  if (spelledAsOption(word, argv)) {
    // yargs reports --no-X as X: name the option as typed.
    const typed = !argv.some((a) => a === `--${word}` || a.startsWith(`--${word}=`)) && argv.includes(`--no-${word}`) ? `no-${word}` : word;
    const dashes = typed.length === 1 ? "-" : "--";
    const meant = closest(typed, known.options.filter((o) => o.length > 1));
    return `unknown option ${dashes}${typed}${meant ? ` (did you mean --${meant}?)` : ""}`;
  }
  if (commandGiven) return `unexpected argument "${word}"`;
  if (AWS_S3_COMMANDS.includes(word)) return `s3x has no ${word} command (it has ${known.commands.join(", ")})`;
  const meant = closest(word, known.commands);
  return `unknown command "${word}"${meant ? ` (did you mean ${meant}?)` : ""}`;
}

function spelledAsOption(word: string, argv: readonly string[]): boolean {
  return argv.some((a) => a === `--${word}` || a.startsWith(`--${word}=`) || a === `-${word}` || a === `--no-${word}`);
}

/**
 * The known word a typo most likely meant: at most one edit away for short
 * words, two for longer ones (an edit: a letter added, dropped, changed, or
 * two neighbours swapped), or one the typed word begins (`--recurs`).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const allowed = word.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = candidate.startsWith(word) && word.length >= 3 ? 1 : editDistance(word, candidate);
    if (d <= allowed && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance (Levenshtein plus adjacent swaps). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
