package dev.holdfast.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/} is for users (issue 56, item 7): the pages that summarise measurements stay within their
 * size, measurement logs live in {@code benchmarks/results/}, and every relative link of the README, of
 * {@code docs/} and of {@code benchmarks/} names a file of the repository.
 */
class DocumentationShapeTest {

    /** Line caps of the pages that summarise measurements; a cap may only go down. */
    private static final Map<String, Integer> CAPS = Map.of("docs/benchmarks.md", 250, "docs/batching.md", 150);

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Path ROOT = RepositoryRoot.path();

    @Test
    void summaryPagesStayWithinTheirCaps() throws IOException {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Integer> cap : CAPS.entrySet()) {
            int lines = Files.readAllLines(ROOT.resolve(cap.getKey())).size();
            if (lines > cap.getValue()) {
                problems.add(cap.getKey() + " has " + lines + " lines, more than " + cap.getValue()
                        + ": move run logs to benchmarks/results/");
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void everyRelativeLinkNamesAFile() throws IOException {
        List<String> problems = new ArrayList<>();
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CHANGELOG.md")));
        for (String dir : List.of("docs", "benchmarks")) {
            try (Stream<Path> files = Files.walk(ROOT.resolve(dir))) {
                files.filter(p -> p.toString().endsWith(".md") && !p.toString().contains("/target/"))
                        .sorted()
                        .forEach(pages::add);
            }
        }
        for (Path page : pages) {
            String text = Files.readString(page).replaceAll("(?s)```.*?```", "");
            Matcher link = LINK.matcher(text);
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("[a-z]+:.*") || target.startsWith("#")) {
                    continue;
                }
                String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                if (!Files.exists(page.getParent().resolve(file).normalize())) {
                    problems.add(ROOT.relativize(page) + ": " + target);
                }
            }
        }
        assertThat(problems).as("links to no file").isEmpty();
    }
}
