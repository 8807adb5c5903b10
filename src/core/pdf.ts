/**
 * PDFs in the offscreen document: pdf.js (`pdfjs-dist`) with its worker from the package
 * (`/runtime/pdfjs/`, copied by wxt.config.ts; no CDN). Loaded lazily by the `pdf.read` handler,
 * so pdf.js is never on the core's start-up path.
 */
import * as pdfjs from 'pdfjs-dist';
import { base64ToBytes, extractPdf, type PdfJsModule } from '../page/pdf';
import type { PageContent, PdfSource } from '../model/page';
import { pdfWorkerUrl } from '../platform/assets';

let configured = false;

/**
 * The text of the PDF in `source` (`data`: the file, base64) as page content (`extractPdf`).
 * @throws Error when `data` is not base64 or not a readable PDF.
 */
export async function readPdfSource(source: PdfSource): Promise<PageContent> {
  if (!configured) {
    pdfjs.GlobalWorkerOptions.workerSrc = pdfWorkerUrl();
    configured = true;
  }
  return extractPdf(pdfjs as unknown as PdfJsModule, base64ToBytes(source.data), source.url, source.title);
}
