/**
 * The portal's icon (browser tabs, bookmarks): an SVG, so one small file is sharp at every
 * size; light and dark alike (its own background).
 */
export const FAVICON_SVG = String.raw`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2457c5"/><path d="M9 23 16 8l7 15M11.5 18h9" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>
`;
