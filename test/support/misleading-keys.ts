/**
 * 544 keys under `prefix` built to mislead the listing's range planner
 * (plan/key-ranges.ts): a dense numbered run, a stretch that ends early, a
 * key just past a likely cut ("0299x"), a shared ".jpg" tail, and
 * characters whose UTF-8 order differs from JavaScript's (U+E000 against
 * astral ones), so a cut or a comparison in the wrong order would lose or
 * repeat keys. Shared by the unit test of the range listing and the
 * integration test through the CLI.
 */
export function misleadingKeys(prefix: string): string[] {
  return [
    ...Array.from({ length: 300 }, (_, i) => `${prefix}n/${String(i).padStart(4, "0")}`),
    `${prefix}n/0299x`,
    `${prefix}n/~`,
    ...Array.from({ length: 150 }, (_, i) => `${prefix}img/${String(i * 3).padStart(6, "0")}.jpg`),
    ...Array.from({ length: 60 }, (_, i) => `${prefix}u/${String.fromCodePoint(0x1f600 + (i % 30))}${i}`),
    ...Array.from({ length: 30 }, (_, i) => `${prefix}u/\uE000${i}`),
    `${prefix}z/é`,
    `${prefix}z/中文 key`,
  ];
}
