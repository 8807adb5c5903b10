/**
 * A hand-written minimal PDF for tests (unit and end to end): one page, one text object per line
 * in Helvetica, and a cross-reference table whose byte offsets are computed as it is written.
 * A few hundred bytes; pdf.js reads it like any PDF with a text layer.
 */
/** A minimal one-page PDF; `lines` are drawn one under the other (none: a page with no text, like a scan). */
export function minimalPdf(lines: string[], title?: string): Uint8Array {
  const text = lines.map((l, i) => `BT /F1 12 Tf 72 ${720 - i * 40} Td (${l}) Tj ET`).join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...(title ? [`<< /Title (${title}) >>`] : []),
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${title ? ' /Info 6 0 R' : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}
