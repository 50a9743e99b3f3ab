// htm bound to Preact's h (htm/preact): the front end's templates are tagged template literals, so there
// is no JSX build step.

export { html } from "htm/preact";
