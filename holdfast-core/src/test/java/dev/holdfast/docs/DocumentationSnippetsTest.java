package dev.holdfast.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java block of the README and of {@code docs/} is a tagged region of a source file that the
 * build compiles and a test runs, word for word: a block is preceded by {@code <!-- snippet: NAME -->}
 * and NAME is the region between {@code // tag::NAME[]} and {@code // end::NAME[]} in exactly one
 * Java file of the repository (indentation removed). A block of another language (XML, properties,
 * YAML) preceded by such a marker is checked the same way against a region of a file of its kind
 * that a test reads, tagged {@code <!-- tag::NAME[] -->} or {@code # tag::NAME[]}.
 */
class DocumentationSnippetsTest {

    private static final Pattern MARKER = Pattern.compile("<!-- snippet: ([a-z0-9-]+) -->");
    private static final Pattern TAG = Pattern.compile("(?://|#|<!--)\\s*tag::([a-z0-9-]+)\\[]\\s*(?:-->)?");
    private static final Pattern END = Pattern.compile("(?://|#|<!--)\\s*end::([a-z0-9-]+)\\[]\\s*(?:-->)?");
    private static final List<String> TAGGED_FILES = List.of(".java", ".xml", ".properties", ".yml", ".yaml");

    private static final Path ROOT = RepositoryRoot.path();

    @Test
    void everyJavaBlockOfTheDocsIsACompiledRegionWordForWord() throws IOException {
        Map<String, List<Region>> regions = regions();
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Path doc : documents()) {
            List<String> lines = Files.readAllLines(doc);
            for (int i = 0; i < lines.size(); i++) {
                String fence = lines.get(i).strip();
                if (!fence.startsWith("```") || fence.equals("```")) {
                    continue;
                }
                String where = ROOT.relativize(doc) + ":" + (i + 1);
                int end = i + 1;
                while (end < lines.size() && !lines.get(end).strip().equals("```")) {
                    end++;
                }
                List<String> block = lines.subList(i + 1, end);
                Matcher marker = i > 0 ? MARKER.matcher(lines.get(i - 1).strip()) : MARKER.matcher("");
                if (!marker.matches()) {
                    if (fence.equals("```java")) {
                        problems.add(where + ": a java block without <!-- snippet: NAME --> above it");
                    }
                } else {
                    List<Region> found = regions.getOrDefault(marker.group(1), List.of());
                    if (found.size() != 1) {
                        problems.add(where + ": snippet '" + marker.group(1) + "' is tagged in " + found.size()
                                + " places, not 1: " + found);
                    } else if (!normalise(block).equals(found.get(0).lines())) {
                        problems.add(where + ": snippet '" + marker.group(1) + "' differs from " + found.get(0)
                                + "\n--- docs\n" + String.join("\n", normalise(block))
                                + "\n--- source\n"
                                + String.join("\n", found.get(0).lines()));
                    }
                    checked++;
                }
                i = end;
            }
        }
        assertThat(problems).isEmpty();
        assertThat(checked).as("snippets checked").isGreaterThanOrEqualTo(6);
    }

    @Test
    void aChangedSnippetIsCaught() {
        List<String> source = normalise(List.of("    int a = 1;", "    int b = 2;  "));
        assertThat(normalise(List.of("int a = 1;", "int b = 2;"))).isEqualTo(source);
        assertThat(normalise(List.of("int a = 1;", "int b = 3;"))).isNotEqualTo(source);
    }

    /** The README and every Markdown file under docs/. */
    private static List<Path> documents() throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(ROOT.resolve("README.md"));
        try (Stream<Path> files = Files.walk(ROOT.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    private static Map<String, List<Region>> regions() throws IOException {
        Map<String, List<Region>> regions = new HashMap<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path file : files.filter(p -> TAGGED_FILES.stream().anyMatch(p.toString()::endsWith))
                    .filter(p ->
                            !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .toList()) {
                List<String> lines = read(file);
                for (int i = 0; i < lines.size(); i++) {
                    Matcher tag = TAG.matcher(lines.get(i).strip());
                    if (tag.matches()) {
                        int j = i + 1;
                        while (j < lines.size() && !isEnd(lines.get(j), tag.group(1))) {
                            j++;
                        }
                        regions.computeIfAbsent(tag.group(1), k -> new ArrayList<>())
                                .add(new Region(
                                        ROOT.relativize(file) + ":" + (i + 1), normalise(lines.subList(i + 1, j))));
                    }
                }
            }
        }
        return regions;
    }

    private static boolean isEnd(String line, String name) {
        Matcher end = END.matcher(line.strip());
        return end.matches() && end.group(1).equals(name);
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Trailing blanks and the common indentation removed. */
    static List<String> normalise(List<String> lines) {
        int indent = lines.stream()
                .filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length())
                .min()
                .orElse(0);
        return lines.stream()
                .map(l -> l.isBlank() ? "" : l.substring(indent).stripTrailing())
                .toList();
    }

    private record Region(String where, List<String> lines) {
        @Override
        public String toString() {
            return where;
        }
    }
}
