/**
 * Saves text as a file through the browser's download UI (an object URL and a temporary
 * `<a download>`), with no `downloads` permission. Browser only.
 * @param fileName suggested file name, e.g. `recall-export-2025-03-04.json`.
 * @param text file content (UTF-8).
 * @param mimeType e.g. `application/json`.
 */
export function downloadText(fileName: string, text: string, mimeType: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: `${mimeType};charset=utf-8` }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoke later: revoking synchronously can cancel the download in Chromium.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
