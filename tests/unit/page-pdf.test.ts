/**
 * Reading a PDF's text layer (src/page/pdf.ts) with the real pdf.js (`pdfjs-dist`'s Node build,
 * the same version the extension packages). The PDFs are written by hand (`minimalPdf`: one page,
 * one text object per line, a correct cross-reference table).
 */
import { describe, expect, it } from 'vitest';
import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';
import { minimalPdf } from '../helpers/minimal-pdf';
import { base64ToBytes, bytesToBase64, extractPdf, isPdfDocument, type PdfJsModule } from '../../src/page/pdf';

const SENTENCE = 'The lighthouse keeper counted 4217 gulls on Tuesday.';

describe('extractPdf', () => {
  it('reads the text layer: a heading per page, then its text; the metadata title wins', async () => {
    const bytes = minimalPdf([SENTENCE], 'Gull census');
    expect(bytes.length).toBeLessThan(1000);
    const content = await extractPdf(pdfjs as unknown as PdfJsModule, bytes, 'https://a.example/census.pdf', 'census.pdf');
    expect(content.title).toBe('Gull census');
    expect(content.url).toBe('https://a.example/census.pdf');
    expect(content.contentType).toBe('application/pdf');
    expect(content.blocks[0]).toEqual({ kind: 'heading', level: 2, text: 'Page 1' });
    expect(
      content.blocks
        .slice(1)
        .map((b) => b.text)
        .join(' '),
    ).toContain(SENTENCE);
  });

  it('a PDF without a text layer (a scan) gives no blocks; without metadata the given title is used', async () => {
    const content = await extractPdf(pdfjs as unknown as PdfJsModule, minimalPdf([]), 'https://a.example/scan.pdf', 'scan.pdf');
    expect(content).toEqual({ url: 'https://a.example/scan.pdf', title: 'scan.pdf', blocks: [], contentType: 'application/pdf' });
  });

  it('rejects bytes that are not a PDF', async () => {
    await expect(extractPdf(pdfjs as unknown as PdfJsModule, new TextEncoder().encode('<html></html>'), 'u', 't')).rejects.toThrow();
  });
});

describe('PDF detection and transport', () => {
  it('a PDF is known by its MIME type, or by a .pdf path on a document with no text', () => {
    expect(isPdfDocument('application/pdf', 'https://a.example/view?id=3', [])).toBe(true);
    expect(isPdfDocument('text/html', 'https://a.example/paper.PDF', [])).toBe(true);
    expect(isPdfDocument('text/html', 'https://a.example/paper.pdf', [{ kind: 'text', text: 'An HTML page about a PDF' }])).toBe(false);
    expect(isPdfDocument('text/html', 'https://a.example/paper.html', [])).toBe(false);
  });

  it('base64 round-trips every byte value', () => {
    const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256);
    const text = bytesToBase64(bytes);
    expect(text).toBe(Buffer.from(bytes).toString('base64'));
    expect(base64ToBytes(text)).toEqual(bytes);
  });
});
