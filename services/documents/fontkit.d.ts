/** The part of fontkit (pdfkit's font engine, no bundled types) this project uses: a parsed font handed to pdfkit's registerFont. */
declare module 'fontkit' {
  /** A parsed font; pdfkit accepts it wherever it accepts font bytes. */
  export interface Font {
    readonly postscriptName: string;
    hasGlyphForCodePoint(codePoint: number): boolean;
    layout(text: string): unknown;
  }
  /** Parses TTF/OTF/WOFF/WOFF2 bytes. */
  export function create(buffer: Uint8Array, postscriptName?: string): Font;
}
