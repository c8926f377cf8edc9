/**
 * What a call and an error are, the same on every page (the dashboard's spend, the
 * Activity page), in the spend reports and in GET /api/requests/daily: stated on the pages
 * in these words.
 */
export const CALL_DEFINITION =
  'A call is a request that reached a provider; a failed call is one the provider did not complete (it costs nothing). ' +
  'Requests agw answered itself before any provider (not enough funds, a key’s limits, a quota, an unknown model, a provider without a key) are refused: free, and not calls.';

export const definitionNote = (id: string) => `<p class="note" id="${id}">${CALL_DEFINITION}</p>`;
