/**
 * aws-cli users write options anywhere, also before the command
 * (`s3x --recursive --dryrun cp a s3://b/`), and ask for help as
 * `s3x help cp`. yargs takes the command from the first word, so the words are
 * put in the order it reads: the command first, everything else as typed.
 */

/** The words with the command moved first; `help [COMMAND]` becomes `[COMMAND] --help`. */
export function commandFirst(argv: readonly string[], commands: readonly string[], isFlag: (name: string) => boolean): string[] {
  const at = commandIndex(argv, [...commands, "help"], isFlag);
  if (at === undefined) return [...argv];
  const rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
  if (argv[at] !== "help") return [argv[at], ...rest];
  const topic = rest.findIndex((word) => commands.includes(word));
  return topic === -1 ? ["--help", ...rest] : [rest[topic], "--help", ...rest.slice(0, topic), ...rest.slice(topic + 1)];
}

/**
 * Where the command is: the first word that is neither an option nor an
 * option's value. A word that is not a command there means the command line
 * has none (yargs then says so), never that the command comes later.
 */
function commandIndex(argv: readonly string[], commands: readonly string[], isFlag: (name: string) => boolean): number | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === "--") return undefined;
    if (word.length > 1 && word.startsWith("-")) {
      const name = word.replace(/^--?/, "");
      // --opt=value, a flag, or a cluster of one-letter flags (-rq) stand alone; any other option takes the next word.
      if (!name.includes("=") && !isFlag(name) && !(word[1] !== "-" && [...name].every((letter) => isFlag(letter)))) i++;
      continue;
    }
    return commands.includes(word) ? i : undefined;
  }
  return undefined;
}
