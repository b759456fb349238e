/** A locale's words, written by the build (scripts/i18n/vite-plugin.ts). */
declare module 'virtual:client-words/*' {
  const words: import('./words.js').WordTable;
  export default words;
}
