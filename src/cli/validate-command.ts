/** `weir validate FILE...`, and the findings printer `weir run` shares with it. */
import { readFile } from 'node:fs/promises';
import { createBuiltinRegistry } from '../adapters/builtin.js';
import { type ValidationReport, validateConfigYaml } from '../engine/config/validate-config.js';
import { loadSettings } from '../settings.js';

/** `FILE: valid|INVALID (n errors, m warnings)`, then each finding with its line and remediation. */
export function formatReport(file: string, report: ValidationReport): string {
  const verdict = report.is_valid ? 'valid' : 'INVALID';
  const lines = [`${file}: ${verdict} (${report.error_count} errors, ${report.warning_count} warnings)\n`];
  for (const finding of report.findings) {
    const where = finding.line ? `${file}:${finding.line}:${finding.column}` : file;
    lines.push(`  ${finding.code} ${finding.severity} ${where} ${finding.path}\n`);
    lines.push(`    ${finding.message}\n    -> ${finding.remediation}\n`);
  }
  return lines.join('');
}

/** The file's text, or undefined after one line on stderr a person can act on (no stack). */
export async function readPipelineFile(command: string, file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    process.stderr.write(`weir ${command}: cannot read ${file}: ${reason}\n`);
    return undefined;
  }
}

export async function validateCommand(files: string[]): Promise<number> {
  if (files.length === 0) {
    process.stderr.write('weir validate: name at least one YAML file\n');
    return 2;
  }
  const registry = createBuiltinRegistry();
  // The environment's settings, as `weir serve` would read them: roots, models and LLM
  // profiles are checked against what this deployment configures (E211-E213).
  const settings = loadSettings(process.env);
  let failed = false;
  for (const file of files) {
    const text = await readPipelineFile('validate', file);
    if (text === undefined) return 2;
    const report = validateConfigYaml(text, registry, settings);
    failed ||= !report.is_valid;
    process.stdout.write(formatReport(file, report));
  }
  return failed ? 1 : 0;
}
