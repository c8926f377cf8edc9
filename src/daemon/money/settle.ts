/**
 * Settling a served call (TigerBeetle's "post" of a pending transfer): the hold taken at
 * admission is replaced by the actual cost, never more. A provider that reports more
 * than the hold covered (a prompt whose images count more tokens than the hold assumed,
 * a provider ignoring max_tokens) is charged the hold and the difference is written off:
 * recorded on the usage record, named in the wallet transaction's description and
 * counted in agw_written_off_nusd_total, never charged. What the hold covered but the
 * call did not use goes back to the account with the hold's release.
 */
export function capAtHold(costNano: number, holdNano: number): { charged: number; writtenOff: number } {
  const charged = Math.min(costNano, Math.max(0, holdNano));
  return { charged, writtenOff: costNano - charged };
}
