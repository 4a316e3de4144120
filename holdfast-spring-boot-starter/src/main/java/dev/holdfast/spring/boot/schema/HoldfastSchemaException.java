package dev.holdfast.spring.boot.schema;

import dev.holdfast.jdbc.SchemaCheck;

import java.util.List;
import java.util.stream.Collectors;

/** Holdfast's tables are missing or outdated: thrown at start-up by {@link HoldfastSchemaVerifier}. */
public class HoldfastSchemaException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** What is missing or outdated. */
    @SuppressWarnings("serial") // an immutable list of records; never serialized in practice
    private final List<SchemaCheck.Problem> problems;
    /** The value of {@code holdfast.jdbc.initialize-schema} at start-up. */
    private final String initializeSchema;

    /**
     * The start-up failure for {@code problems}, which the message describes.
     *
     * @param problems         what is missing, at least one
     * @param initializeSchema the value of {@code holdfast.jdbc.initialize-schema} at start-up
     */
    public HoldfastSchemaException(List<SchemaCheck.Problem> problems, String initializeSchema) {
        super("Holdfast's schema is missing or outdated: "
                + problems.stream().map(SchemaCheck.Problem::describe).collect(Collectors.joining("; ")));
        this.problems = List.copyOf(problems);
        this.initializeSchema = initializeSchema;
    }

    /** {@return what is missing or outdated, as an unmodifiable list} */
    public List<SchemaCheck.Problem> problems() {
        return problems;
    }

    /**
     * {@return the value of {@code holdfast.jdbc.initialize-schema} at start-up ({@code embedded}, {@code always},
     * {@code never})}
     */
    public String initializeSchema() {
        return initializeSchema;
    }
}
