/**
 * The escapers and the link check each medium applies to platform text. Pure.
 *
 * Written by hand: each is a fixed table of three or five characters (a dependency would be larger
 * than the code), and Slack's mrkdwn has no escaper package worth the name.
 */

/**
 * Slack's three control characters (api.slack.com "Formatting text: escaping text"). `&` first, so
 * the entities made for `<` and `>` are not escaped again. After this no `<` can open a link, a
 * mention (`<!channel>`, `<@U…>`) or a date token, whatever the text.
 */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** U+200B ZERO WIDTH SPACE. */
const ZWSP = "\u200B";

/**
 * For platform text that has to sit inside a `mrkdwn` object (a link label, a digest line): the three
 * control characters escaped, and each formatting character (`*` bold, `_` italic, `~` strike, `` ` ``
 * code) fenced by zero-width spaces. mrkdwn has no backslash escape; a marker only formats when it
 * opens after a boundary and is followed by text, and closes after text and before a boundary. With a
 * ZWSP on both sides neither condition holds, whether Slack counts ZWSP as a letter or as a space.
 * A `*`, `_` or `~` between two ASCII letters or digits (`DEPLOYMENT_ERROR`, `a*b`) can do neither, and
 * is left as it is: an error tag copied from a digest line still searches. A backtick is always fenced
 * (nothing is gained by leaving it, and inline code's rule is less clear). The price elsewhere is invisible
 * characters in copied text, which is why the renderers keep platform text in `plain_text` objects
 * wherever Block Kit allows one, and use this only where it does not.
 */
export function neutralizeMrkdwn(text: string): string {
  const inWord = (c: string | undefined) => c !== undefined && /[A-Za-z0-9]/.test(c);
  return escapeSlack(text).replace(/[*_~`]/g, (c, at: number, all: string) => (c !== "`" && inWord(all[at - 1]) && inWord(all[at + 1]) ? c : `${ZWSP}${c}${ZWSP}`));
}

/**
 * HTML text and attribute values: the five characters of the HTML spec's "escaping a string" plus the
 * apostrophe, so a value is safe in text and in either kind of quoted attribute.
 */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/**
 * A link from the platform, or undefined when it is not one we may show: only absolute http(s) URLs,
 * without credentials, normalised by the WHATWG URL parser (which percent-encodes spaces, quotes, `<`,
 * `>` and controls). `|` is encoded too, as it would end the URL part of a Slack `<url|label>` link.
 */
export function safeHttpUrl(link: string | undefined, maxLength = 3000): string | undefined {
  if (!link) return undefined;
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username || url.password) return undefined;
  const href = url.href.replace(/\|/g, "%7C");
  return href.length <= maxLength ? href : undefined;
}
