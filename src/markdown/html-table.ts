/**
 * The grid of an HTML table as a reader sees it: a cell spanning rows (`rowspan`) or columns
 * (`colspan`) fills every slot it covers, so the cells after it stay in their own columns. A
 * `rowspan` cell used to shift the rest of each row it covered one column to the left.
 * Spans are capped: a hostile `rowspan="100000"` costs no more than the rows that exist.
 */
import type { Element } from 'domhandler';

/** Widest span honoured; browsers cap colspan at 1000 and rowspan at 65534. */
const maxSpan = 1000;

export interface TableGrid {
  rows: string[][];
  /** The first row made only of `th` cells, or -1. */
  headerRow: number;
}

/** The rows of `table` (not of a table nested in a cell), each cell rendered by `render`. */
export function tableGrid(table: Element, render: (cell: Element) => string): TableGrid {
  const rows: string[][] = [];
  let headerRow = -1;
  // Cells still covering the rows below: by column, the text and how many more rows.
  const spanning: Array<{ text: string; rows: number } | undefined> = [];
  const stack: Element[] = [table];
  const addRow = (row: Element) => {
    const cells = row.children.filter(
      (cell): cell is Element => cell.type === 'tag' && (cell.name === 'td' || cell.name === 'th'),
    );
    if (cells.length === 0) return;
    if (headerRow < 0 && cells.every((cell) => cell.name === 'th')) headerRow = rows.length;
    const line: string[] = [];
    const fillSpanned = () => {
      for (
        let pending = spanning[line.length];
        pending && pending.rows > 0;
        pending = spanning[line.length]
      ) {
        line.push(pending.text);
        pending.rows--;
      }
    };
    for (const cell of cells) {
      fillSpanned();
      const text = render(cell);
      const columns = spanOf(cell.attribs.colspan);
      const below = spanOf(cell.attribs.rowspan) - 1;
      for (let column = 0; column < columns; column++) {
        if (below > 0) spanning[line.length] = { text, rows: below };
        line.push(text);
      }
    }
    fillSpanned();
    rows.push(line);
  };
  while (stack.length > 0) {
    const element = stack.shift() as Element;
    for (const child of element.children) {
      if (child.type !== 'tag') continue;
      if (child.name === 'tr') addRow(child);
      else if (child.name === 'thead' || child.name === 'tbody' || child.name === 'tfoot') stack.push(child);
    }
  }
  return { rows, headerRow };
}

function spanOf(value: string | undefined): number {
  const span = Number.parseInt(value ?? '1', 10);
  return Number.isFinite(span) && span >= 1 ? Math.min(span, maxSpan) : 1;
}
