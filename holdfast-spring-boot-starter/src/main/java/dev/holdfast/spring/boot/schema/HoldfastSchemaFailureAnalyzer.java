package dev.holdfast.spring.boot.schema;

import dev.holdfast.jdbc.SchemaCheck;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Explains a {@link HoldfastSchemaException}: which Holdfast table or column is missing, and how to
 * create it (let the starter run the scripts, or run them with your migration tool). Registered in
 * {@code META-INF/spring.factories}.
 */
public class HoldfastSchemaFailureAnalyzer extends AbstractFailureAnalyzer<HoldfastSchemaException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, HoldfastSchemaException cause) {
        StringBuilder description = new StringBuilder("Holdfast's tables are missing or outdated:");
        Set<String> scripts = new LinkedHashSet<>();
        for (SchemaCheck.Problem problem : cause.problems()) {
            description.append("\n\t- ").append(problem.describe());
            scripts.add(problem.script());
        }
        String action = "Create Holdfast's tables:\n"
                + "\t- let the starter create them at every start (idempotent): set holdfast.jdbc.initialize-schema=always"
                + " (now " + cause.initializeSchema() + ");\n"
                + "\t- or run the scripts shipped in holdfast-core with Flyway or Liquibase, or by hand: "
                + String.join(", ", scripts) + " (the table name is the placeholder ${<table>_table});\n"
                + "\t- or, if the tables are there under other names, set holdfast.offline.table and"
                + " holdfast.lease.table.\n"
                + "To start without this check, set holdfast.jdbc.schema-check=false.";
        return new FailureAnalysis(description.toString(), action, cause);
    }
}
