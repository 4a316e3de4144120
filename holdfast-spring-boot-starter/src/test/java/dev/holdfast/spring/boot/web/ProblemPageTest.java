package dev.holdfast.spring.boot.web;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The built-in page shows every value as text: no markup and no placeholder gets through. */
class ProblemPageTest {

    @Test
    void valuesAreEscapedAndNeverReadAsPlaceholders() {
        String html = new ProblemPage(
                        "lock-problem",
                        "no-lock",
                        "Title <b>${detail}</b>",
                        "Detail ${title} & ${nothing}",
                        List.of("<script>alert(1)</script>", "${items}"))
                .html();
        assertThat(html)
                .contains("<main data-page=\"lock-problem\" data-code=\"no-lock\">")
                .contains("<h1>Title &lt;b&gt;&#36;{detail}&lt;/b&gt;</h1>")
                .contains("<p id=\"lock-problem-detail\">Detail &#36;{title} &amp; &#36;{nothing}</p>")
                .contains("<li>&lt;script&gt;alert(1)&lt;/script&gt;</li>", "<li>&#36;{items}</li>")
                .doesNotContain("<script>", "<b>");
    }

    @Test
    void withoutItemsThereIsNoList() {
        String html = new ProblemPage("version-problem", "bad-version", "T", "D", List.of()).html();
        assertThat(html).contains("<p id=\"version-problem-detail\">D</p>").doesNotContain("<ul", "${");
    }
}
