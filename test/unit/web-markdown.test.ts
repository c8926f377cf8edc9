import { describe, expect, test } from 'vitest';
import { MARKDOWN_MAX_CHARS, renderMarkdown } from '../../src/daemon/web/markdown.js';

/** Skill documents are anyone's text: what the page gets must be inert and still readable. */
describe('renderMarkdown (skill SKILL.md / README.md → safe HTML)', () => {
  test('raw HTML in the source is shown as text, never as markup', () => {
    const html = renderMarkdown('<script>window.pwned=1</script>\n\n<img src=x onerror="window.pwned=2">\n\nInline <b onclick="x()">b</b>');
    expect(html).not.toMatch(/<(?:script|img|b)[\s>]/i);
    expect(html).toContain('&lt;script&gt;window.pwned=1&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror="window.pwned=2"&gt;');
  });

  test('only http(s) and mailto links survive, with rel=nofollow; others become text', () => {
    const html = renderMarkdown(
      '[js](javascript:alert(1)) [ok](https://example.com "T") [mail](mailto:a@b.c) [rel](docs/x.md) [data](data:text/html;base64,PHNjcmlwdD4=) [vb](VBSCRIPT:x) [proto](//evil.example/x) <https://a.example/c>',
    );
    expect(html).toContain('<a href="https://example.com" title="T" rel="nofollow ugc noopener noreferrer">ok</a>');
    expect(html).toContain('<a href="mailto:a@b.c" rel="nofollow ugc noopener noreferrer">mail</a>');
    expect(html).toContain('<a href="https://a.example/c" rel="nofollow ugc noopener noreferrer">');
    expect(html).not.toMatch(/href="(?:javascript|vbscript|data|docs|\/\/)/i);
    expect((html.match(/<a /g) ?? []).length).toBe(3);
  });

  test('images become their alt text; headings shift below the page title; code keeps its language class', () => {
    const html = renderMarkdown('# Title\n\n## Sub\n\n![a <b>diagram</b>](https://e.example/x.png)\n\n```js" onmouseover="x\nlet a = "<b>";\n```\n');
    expect(html).toContain('<h2>Title</h2>');
    expect(html).toContain('<h3>Sub</h3>');
    expect(html).not.toContain('<img');
    expect(html).toContain('<span class="md-img">[image: a &lt;b&gt;diagram&lt;/b&gt;]</span>');
    expect(html).toContain('<pre><code>let a');
    expect(html).toContain('let a = "&lt;b&gt;";');
    expect(renderMarkdown('```python\nprint(1)\n```')).toContain('<code class="language-python">');
  });

  test('tables render without inline styles (the CSP forbids them)', () => {
    const html = renderMarkdown('| a | b |\n|--:|---|\n| 1 | 2 |\n');
    expect(html).toContain('<table>');
    expect(html).not.toContain('style=');
  });

  test('an oversized document is cut and says so', () => {
    const html = renderMarkdown('x'.repeat(MARKDOWN_MAX_CHARS + 10));
    expect(html).toContain('is not shown');
  });

  test('release notes: the highest heading becomes h4 (under the version’s h3), the rest follow; raw HTML stays text', () => {
    expect(renderMarkdown('### Added\n- **a**\n\n#### Detail\n', 4)).toBe('<h4>Added</h4>\n<ul>\n<li><strong>a</strong></li>\n</ul>\n<h5>Detail</h5>\n');
    expect(renderMarkdown('# Big\n\n## Small\n', 4)).toBe('<h4>Big</h4>\n<h5>Small</h5>\n');
    expect(renderMarkdown('Fixed <b>it</b>.', 4)).toBe('<p>Fixed &lt;b&gt;it&lt;/b&gt;.</p>\n');
  });
});
