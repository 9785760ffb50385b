/**
 * XLSX to markdown: one `## sheet name` section per sheet in workbook order, its used cells
 * as a GFM table whose first row is the header. Values are shown as stored (numbers
 * unformatted, formulas by their cached result); empty rows are left out, and at most
 * `maxRows` rows of a sheet are written, with a note when more were left out.
 */
import { type ConversionLimits, type ConvertedDocument, DocumentError } from './document-error.js';
import { attribute, cell, coreProperties, elements, relationshipTargets, textOf } from './office-xml.js';
import { readZip } from './zip.js';

const maxRows = 5000;
const maxColumns = 200;

export function xlsxToMarkdown(data: Buffer, limits: ConversionLimits): ConvertedDocument {
  const files = readZip(
    data,
    limits.maxUnzippedBytes,
    (name) =>
      name.startsWith('xl/worksheets/sheet') ||
      ['xl/workbook.xml', 'xl/_rels/workbook.xml.rels', 'xl/sharedStrings.xml', 'docProps/core.xml'].includes(
        name,
      ),
  );
  const workbook = files.get('xl/workbook.xml')?.toString('utf8');
  if (workbook === undefined)
    throw new DocumentError('ZIP archive is not an Excel file (no xl/workbook.xml)');
  const shared = elements(files.get('xl/sharedStrings.xml')?.toString('utf8') ?? '', 'si').map((item) =>
    textOf(item, 't'),
  );
  const targets = relationshipTargets(files.get('xl/_rels/workbook.xml.rels')?.toString('utf8') ?? '', 'xl');
  const sections: string[] = [];
  const sheets = elements(workbook, 'sheet');
  for (const sheet of sheets.slice(0, limits.maxPages)) {
    const name = attribute(sheet, 'sheet', 'name') ?? 'Sheet';
    const part = targets.get(attribute(sheet, 'sheet', 'r:id') ?? '');
    const xml = part ? files.get(part)?.toString('utf8') : undefined;
    if (xml === undefined) continue;
    const table = sheetTable(xml, shared);
    if (table) sections.push(`## ${name}\n\n${table}`);
  }
  const properties = coreProperties(files.get('docProps/core.xml')?.toString('utf8') ?? '');
  const markdown = sections.join('\n\n');
  return {
    markdown: markdown ? `${markdown}\n` : '',
    title: properties.title,
    declaredLanguage: properties.language,
    description: properties.description,
    pageCount: sheets.length,
    ...(sheets.length > limits.maxPages ? { pagesConverted: limits.maxPages } : {}),
  };
}

function sheetTable(xml: string, shared: readonly string[]): string {
  const rows: string[][] = [];
  let omitted = 0;
  for (const row of elements(xml, 'row')) {
    const values: string[] = [];
    for (const element of elements(row, 'c')) {
      const column = columnIndex(attribute(element, 'c', 'r') ?? '') ?? values.length;
      if (column >= maxColumns) continue;
      values[column] = cellValue(element, shared);
    }
    const filled = Array.from(values, (value) => value ?? '');
    if (filled.every((value) => value.trim() === '')) continue;
    if (rows.length >= maxRows) {
      omitted++;
      continue;
    }
    rows.push(filled);
  }
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((row) => row.length));
  const line = (row: readonly string[]) =>
    `| ${Array.from({ length: width }, (_, index) => cell(row[index] ?? '')).join(' | ')} |`;
  const [header = [], ...body] = rows;
  const table = [
    line(header),
    `| ${Array.from({ length: width }, () => '---').join(' | ')} |`,
    ...body.map(line),
  ];
  if (omitted > 0) table.push('', `(${omitted} more rows left out)`);
  return table.join('\n');
}

function cellValue(element: string, shared: readonly string[]): string {
  const type = attribute(element, 'c', 't');
  if (type === 'inlineStr') return textOf(element, 't');
  const value = textOf(element, 'v');
  if (type === 's') return shared[Number(value)] ?? '';
  if (type === 'b') return value === '1' ? 'TRUE' : 'FALSE';
  return value;
}

/** `C7` -> 2. */
function columnIndex(reference: string): number | undefined {
  const letters = /^([A-Z]{1,3})\d*$/.exec(reference)?.[1];
  if (!letters) return undefined;
  let index = 0;
  for (const letter of letters) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}
