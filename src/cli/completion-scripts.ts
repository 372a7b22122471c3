/**
 * The scripts `s3x completion SHELL` prints. Each one hands the words typed
 * so far to `s3x __complete` (cli/completion.ts) and reads back a first line
 * ("files": let the shell complete a local path; "words": the candidates
 * follow, one a line) so that every shell offers the same commands, options
 * and S3 URLs. A URL ending in "/" (a bucket or a prefix) gets no space
 * after it, so that Tab can go on one level down.
 */

export const COMPLETION_SHELLS = ["bash", "zsh", "fish"] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

// bash cuts "s3://b" into "s3", ":" and "//b" (":" is in COMP_WORDBREAKS) and
// replaces only the part after the last cut: the script reads the whole word
// from COMP_LINE and gives bash each candidate without what comes before that
// part. It is registered without `-o default` so that an empty answer (an S3
// listing with nothing under it) offers nothing, not the local "/".
const BASH = [
  '# s3x tab completion for bash: add it to ~/.bashrc (s3x completion bash >> ~/.bashrc)',
  '_s3x_complete() {',
  '    local line=${COMP_LINE:0:COMP_POINT}',
  '    local word=${line##*[[:space:]]}',
  '    local -a words lines',
  '    read -ra words <<< "$line"',
  '    [[ -z $word ]] && words+=("")',
  '    mapfile -t lines < <(s3x __complete "${words[@]:1}" 2>/dev/null)',
  '    COMPREPLY=()',
  '    if [[ ${lines[0]} == files ]]; then',
  '        compopt -o default',
  '        return 0',
  '    fi',
  '    # As paths: bash lists them by their last part and quotes what needs it (a key with a space).',
  '    [[ ${lines[1]} == s3://* ]] && compopt -o filenames',
  '    local cur=${COMP_WORDS[COMP_CWORD]}',
  '    local cut=$(( ${#word} - ${#cur} ))',
  '    (( cut < 0 )) && cut=0',
  '    local candidate',
  '    for candidate in "${lines[@]:1}"; do',
  '        [[ -n $candidate ]] && COMPREPLY+=("${candidate:cut}")',
  '    done',
  '    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == */ ]]; then',
  '        compopt -o nospace',
  '    fi',
  '    return 0',
  '}',
  'complete -F _s3x_complete s3x',
].join("\n") + "\n";

const ZSH = [
  '#compdef s3x',
  '# s3x tab completion for zsh: add it to ~/.zshrc (s3x completion zsh >> ~/.zshrc)',
  '_s3x() {',
  '    local -a lines slash plain',
  '    lines=("${(@f)$(s3x __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")',
  '    if [[ ${lines[1]} == files ]]; then',
  '        _files',
  '        return',
  '    fi',
  '    shift lines',
  '    slash=(${(M)lines:#*/})',
  '    plain=(${lines:#*/})',
  '    (( ${#slash} )) && compadd -S \'\' -- "${slash[@]}"',
  '    (( ${#plain} )) && compadd -- "${plain[@]}"',
  '    return 0',
  '}',
  'if (( ! $+functions[compdef] )); then',
  '    autoload -Uz compinit && compinit',
  'fi',
  'compdef _s3x s3x',
].join("\n") + "\n";

const FISH = [
  '# s3x tab completion for fish: s3x completion fish > ~/.config/fish/completions/s3x.fish',
  'function __s3x_complete',
  '    set -l typed (commandline -opc)',
  '    set -l current (commandline -ct)',
  '    set -l lines (s3x __complete $typed[2..-1] "$current" 2>/dev/null)',
  '    if test "$lines[1]" = files',
  '        __fish_complete_path "$current"',
  '        return',
  '    end',
  '    for candidate in $lines[2..-1]',
  '        echo $candidate',
  '    end',
  'end',
  'complete -c s3x -f -a \'(__s3x_complete)\'',
].join("\n") + "\n";

export function completionScript(shell: CompletionShell): string {
  return { bash: BASH, zsh: ZSH, fish: FISH }[shell];
}
