/**
 * Splits a JSON array's text into its top-level elements, each with the
 * line it starts on, so that a bad element of a SageMaker manifest is
 * reported at its own line. JSON.parse cannot do this: Node 20's messages
 * give no position ("Unexpected token '}', ... is not valid JSON").
 *
 * The scan only finds where elements begin and end (strings, nesting,
 * separators); each element's text is then checked by JSON.parse, which
 * rejects whatever the scan let through (a bad escape, a stray letter).
 */

/** One top-level element's source text and the line (1-based) it starts on. */
export interface ArrayElement {
  text: string;
  line: number;
}

export type ArrayScan = { ok: true; elements: ArrayElement[] } | { ok: false; line: number; reason: string };

/** Thrown inside the scan and turned into an `{ ok: false }` result at the top. */
class ScanFailure {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {}
}

export function scanJsonArray(text: string): ArrayScan {
  try {
    return { ok: true, elements: new Scanner(text).array() };
  } catch (err) {
    if (err instanceof ScanFailure) return { ok: false, line: err.line, reason: err.reason };
    throw err;
  }
}

class Scanner {
  private pos = 0;
  private line = 1;

  constructor(private readonly text: string) {}

  array(): ArrayElement[] {
    this.skipSpace();
    if (this.text[this.pos] !== "[") this.fail("expected a JSON array");
    this.pos++;
    const elements: ArrayElement[] = [];
    this.skipSpace();
    if (this.text[this.pos] === "]") {
      this.pos++;
    } else {
      for (;;) {
        this.skipSpace();
        if (this.pos >= this.text.length) this.fail('the array is not closed ("]" missing)');
        const line = this.line;
        const start = this.pos;
        this.value();
        elements.push({ text: this.text.slice(start, this.pos), line });
        this.skipSpace();
        const next = this.text[this.pos];
        if (next === "]") {
          this.pos++;
          break;
        }
        if (next === undefined) this.fail('the array is not closed ("]" missing)');
        if (next !== ",") this.fail(`expected "," or "]" after an element, found ${JSON.stringify(next)}`);
        this.pos++;
        this.skipSpace();
        if (this.text[this.pos] === "]") this.fail('a "," before "]" (JSON allows no trailing comma)');
      }
    }
    this.skipSpace();
    if (this.pos < this.text.length) this.fail('text after the closing "]"');
    return elements;
  }

  /** Past one value: a string, an object or array (nested), or a literal (number, true, false, null). */
  private value(): void {
    const first = this.text[this.pos];
    if (first === '"') return this.string();
    if (first === "{" || first === "[") return this.nested();
    const start = this.pos;
    while (this.pos < this.text.length && !/[\s,\]}]/.test(this.text[this.pos])) this.pos++;
    if (this.pos === start) this.fail(`unexpected ${JSON.stringify(first)}`);
  }

  /** Past a string; JSON strings hold no raw line break, so one that reaches the end of its line is unclosed. */
  private string(): void {
    const line = this.line;
    this.pos++;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === "\\") this.pos += 2;
      else if (c === '"') {
        this.pos++;
        return;
      } else if (c === "\n") break;
      else this.pos++;
    }
    this.fail("a string is not closed on its line", line);
  }

  /** Past an object or array, its brackets matched (a mismatch is reported where it is, not at the end of the text). */
  private nested(): void {
    const line = this.line;
    const open: string[] = [];
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === '"') {
        this.string();
        continue;
      }
      if (c === "\n") this.line++;
      else if (c === "{") open.push("}");
      else if (c === "[") open.push("]");
      else if (c === "}" || c === "]") {
        const expected = open.pop();
        if (c !== expected) this.fail(`${JSON.stringify(c)} where ${JSON.stringify(expected)} was expected`);
      }
      this.pos++;
      if (open.length === 0) return;
    }
    this.fail("an object or array is not closed", line);
  }

  private skipSpace(): void {
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === "\n") this.line++;
      else if (c !== " " && c !== "\t" && c !== "\r") return;
      this.pos++;
    }
  }

  private fail(reason: string, line = this.line): never {
    throw new ScanFailure(line, reason);
  }
}
