package dev.holdfast.spring.boot.web;

import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.optimistic.Assignments;
import dev.holdfast.optimistic.VersionedTable;
import dev.holdfast.optimistic.offline.OptimisticOfflineLock;
import dev.holdfast.spring.boot.HoldfastExceptionTranslator;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Controller;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.view;

/**
 * The version helpers on a small controller: {@link ClientVersion} binding (400 for a missing or bad
 * version), version conflicts as 409 pages or problem details (also when translated to Spring's
 * exception), a tampered sealed state as 400 — each leaving the row unchanged.
 */
class VersionConflictWebTest {

    private JdbcTemplate jdbc;
    private VersionedTable items;
    private OptimisticOfflineLock offline;
    private MockMvc mvc;
    private MockMvc mvcWithView;
    private final List<String> conflicts = new ArrayList<>();
    private final HoldfastExceptionTranslator translator = new HoldfastExceptionTranslator();

    @Controller
    class ItemController {
        @PostMapping("/items/{id}/rename")
        @ResponseBody
        String rename(
                @PathVariable long id,
                @RequestParam(required = false) String version,
                @RequestParam String name,
                @RequestParam(defaultValue = "false") boolean spring)
                throws Exception {
            long seen = ClientVersion.parse(version).value();
            try (Connection c = jdbc.getDataSource().getConnection()) {
                return "version " + items.update(c, id, seen, "kim", Assignments.of("name", name));
            } catch (RuntimeException e) {
                throw spring ? translator.translate(e) : e;
            }
        }

        @PostMapping("/items/{id}/confirm")
        @ResponseBody
        String confirm(@PathVariable long id, @RequestParam String state) {
            var tx = offline.open(state, "session-1");
            tx.write(items, id, Assignments.of("name", "confirmed"));
            offline.commit(jdbc.getDataSource(), tx, "kim");
            return "confirmed";
        }
    }

    @BeforeEach
    void setUp() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:version-web-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        new SchemaInstaller(ds).installClock();
        jdbc = new JdbcTemplate(ds);
        jdbc.execute("CREATE TABLE item (id BIGINT PRIMARY KEY, name VARCHAR(50), version BIGINT NOT NULL,"
                + " modified_by VARCHAR(50), modified TIMESTAMP WITH TIME ZONE)");
        jdbc.update("INSERT INTO item VALUES (1, 'kettle', 3, 'alice', CURRENT_TIMESTAMP)");
        items = VersionedTable.builder("item").dialect(Dialect.H2).build();
        offline = OptimisticOfflineLock.builder(new byte[32]).table(items).build();
        mvc = MockMvcBuilders.standaloneSetup(new ItemController())
                .setControllerAdvice(new VersionConflictExceptionHandler(null, e -> conflicts.add(e.getMessage())))
                .build();
        mvcWithView = MockMvcBuilders.standaloneSetup(new ItemController())
                .setControllerAdvice(new VersionConflictExceptionHandler("conflict"))
                .build();
    }

    private String row() {
        return jdbc.queryForObject("SELECT name || '@' || version FROM item WHERE id = 1", String.class);
    }

    @Test
    void theCurrentVersionSaves() throws Exception {
        mvc.perform(post("/items/1/rename").param("version", " 3 ").param("name", "pot"))
                .andExpect(status().isOk())
                .andExpect(content().string("version 4"));
        assertThat(row()).isEqualTo("pot@4");
    }

    @Test
    void missingOrMalformedVersionsAre400AndChangeNothing() throws Exception {
        mvc.perform(post("/items/1/rename").param("name", "pot"))
                .andExpect(status().isBadRequest())
                .andExpect(content().string(containsString("The form carried no version")));
        for (String bad : new String[] {"", "x", "-1", "3.0", "99999999999999999999", "1e3", "<b>3</b>"}) {
            mvc.perform(post("/items/1/rename").param("version", bad).param("name", "pot"))
                    .andExpect(status().isBadRequest());
        }
        mvc.perform(post("/items/1/rename")
                        .param("version", "abc")
                        .param("name", "pot")
                        .header("Accept", "application/json"))
                .andExpect(status().isBadRequest())
                .andExpect(content().contentTypeCompatibleWith("application/problem+json"))
                .andExpect(jsonPath("$.code").value("bad-version"));
        assertThat(row()).isEqualTo("kettle@3");
        assertThat(conflicts).isEmpty();
    }

    @Test
    void staleVersionsAre409PagesOrProblemDetailsSayingWhoChangedWhatWhen() throws Exception {
        mvc.perform(post("/items/1/rename").param("version", "2").param("name", "pot"))
                .andExpect(status().isConflict())
                .andExpect(content().contentTypeCompatibleWith("text/html"))
                .andExpect(content().string(containsString("item 1 was modified by alice at")))
                .andExpect(content().string(containsString("version 3, you had 2")));
        // translated to Spring's OptimisticLockingFailureException on the way: the same answer
        mvc.perform(post("/items/1/rename")
                        .param("version", "2")
                        .param("name", "pot")
                        .param("spring", "true")
                        .header("Accept", "application/json"))
                .andExpect(status().isConflict())
                .andExpect(content().contentTypeCompatibleWith("application/problem+json"))
                .andExpect(jsonPath("$.code").value("version-conflict"))
                .andExpect(jsonPath("$.staleRows[0].entity").value("item"))
                .andExpect(jsonPath("$.staleRows[0].expectedVersion").value(2))
                .andExpect(jsonPath("$.staleRows[0].currentVersion").value(3))
                .andExpect(jsonPath("$.staleRows[0].modifiedBy").value("alice"))
                .andExpect(jsonPath("$.staleRows[0].modified").isString());
        var result = mvcWithView
                .perform(post("/items/1/rename").param("version", "1").param("name", "pot"))
                .andExpect(status().isConflict())
                .andExpect(view().name("conflict"))
                .andReturn();
        VersionProblem problem =
                (VersionProblem) result.getModelAndView().getModel().get("versionProblem");
        assertThat(problem.staleRows()).singleElement().satisfies(r -> {
            assertThat(r.expectedVersion()).isEqualTo(1);
            assertThat(r.current().modifiedBy()).isEqualTo("alice");
        });
        assertThat(row()).isEqualTo("kettle@3");
        assertThat(conflicts).hasSize(2);
    }

    @Test
    void aTamperedOrForeignSealedStateIs400AndChangesNothing() throws Exception {
        var tx = offline.begin().recordRead(items, 1L, 3);
        String state = offline.seal(tx, "session-1");
        String forged = offline.seal(offline.begin().recordRead(items, 1L, 3), "session-2");
        String altered = (state.charAt(0) == 'A' ? 'B' : 'A') + state.substring(1);
        for (String bad : new String[] {altered, forged, "garbage", ""}) {
            mvc.perform(post("/items/1/confirm").param("state", bad))
                    .andExpect(status().isBadRequest())
                    .andExpect(content().string(containsString("The form was altered")));
        }
        mvc.perform(post("/items/1/confirm").param("state", altered).header("Accept", "application/json"))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.code").value("tampered-state"));
        assertThat(row()).isEqualTo("kettle@3");
        mvc.perform(post("/items/1/confirm").param("state", state)).andExpect(status().isOk());
        assertThat(row()).isEqualTo("confirmed@4");
    }
}
