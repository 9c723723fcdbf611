export { CURRENCY_EXPONENTS } from './iso4217.js';
export { currencyExponent, fromMinorUnits, isKnownCurrency, toMinorUnits } from './to-minor-units.js';
