/** The part of vader-sentiment (the VADER authors' JavaScript port, Apache-2.0, no bundled types) this project uses. */
declare module 'vader-sentiment' {
  /** VADER's scores of one text: shares of negative, neutral and positive valence, and the normalised sum in [-1, 1]. */
  export interface PolarityScores {
    readonly neg: number;
    readonly neu: number;
    readonly pos: number;
    readonly compound: number;
  }
  export const SentimentIntensityAnalyzer: { polarity_scores(text: string): PolarityScores };
}
