/**
 * Writes src/core/money/iso4217.ts from the `currency-codes` devDependency, so the
 * library ships the exponent table without depending on that package at runtime.
 *
 * Run: npx tsx scripts/generate-iso4217.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { data, publishDate } from 'currency-codes';

const require = createRequire(import.meta.url);
const PACKAGE_VERSION = (require('currency-codes/package.json') as { version: string }).version;
const OUTPUT = new URL('../src/core/money/iso4217.ts', import.meta.url);

/**
 * Codes whose ISO minor unit is "N.A." (XAU, XXX, XDR...). `currency-codes` turns "N.A."
 * into 0 in its `data` (`parseInt(...) || 0`), which would make gold or "no currency"
 * look like a payable zero-decimal currency, so we read the ISO list it ships instead.
 */
function codesWithoutMinorUnit(): Set<string> {
  const xml = readFileSync(require.resolve('currency-codes/iso-4217-list-one.xml'), 'utf8');
  const codes = new Set<string>();
  for (const entry of xml.split('<CcyNtry>').slice(1)) {
    const code = /<Ccy>([A-Z]{3})<\/Ccy>/.exec(entry)?.[1];
    const units = /<CcyMnrUnts>([^<]*)<\/CcyMnrUnts>/.exec(entry)?.[1];
    if (code !== undefined && !/^\d+$/.test(units ?? '')) codes.add(code);
  }
  // Fail loudly if the package stops shipping the XML or changes its shape.
  if (!codes.has('XAU') || !codes.has('XXX')) throw new Error('currency-codes XML: expected XAU and XXX to have no minor unit');
  return codes;
}

/**
 * Currencies ISO 4217 added after the list the package ships: the Caribbean guilder (XCG, 2 digits),
 * which replaced the Netherlands Antillean guilder (ANG, kept for older orders) on 31 March 2025.
 * The package's own entry wins once it has one.
 */
export const ADDED_SINCE: Readonly<Record<string, number>> = { XCG: 2 };

/** code → exponent, sorted by code, for every currency that has a numeric minor unit. */
export function buildExponentTable(): Record<string, number> {
  const excluded = codesWithoutMinorUnit();
  const listed = data
    .filter((c) => typeof c.digits === 'number' && Number.isInteger(c.digits) && !excluded.has(c.code))
    .map((c): [string, number] => [c.code, c.digits]);
  const known = new Set(listed.map(([code]) => code));
  const entries = [...listed, ...Object.entries(ADDED_SINCE).filter(([code]) => !known.has(code))]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

export function renderIso4217Module(table: Record<string, number> = buildExponentTable()): string {
  const lines = Object.entries(table).map(([code, digits]) => `  ${code}: ${digits},`);
  return [
    '// GENERATED FILE, do not edit: run `npx tsx scripts/generate-iso4217.ts`.',
    `// Source: currency-codes@${PACKAGE_VERSION} (ISO 4217 list one, published ${publishDate}), and codes added since: ${Object.keys(ADDED_SINCE).join(', ')}.`,
    '// Currency code → number of minor-unit digits (the exponent). Codes whose ISO minor unit',
    '// is "N.A." (precious metals, XDR, XXX...) are left out on purpose.',
    '',
    'export const CURRENCY_EXPONENTS: Readonly<Record<string, number>> = Object.freeze({',
    ...lines,
    '});',
    '',
  ].join('\n');
}

// Only write when run as a script, so the test can import the functions above.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OUTPUT, renderIso4217Module());
  console.log(`wrote ${OUTPUT.pathname} (${Object.keys(buildExponentTable()).length} currencies)`);
}
