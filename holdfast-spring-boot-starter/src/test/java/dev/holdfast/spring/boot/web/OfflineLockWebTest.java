package dev.holdfast.spring.boot.web;

import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.SchemaInstaller;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockId;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.format.support.FormattingConversionService;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.view;

/** The MVC helpers on a small controller: LockId binding, the lock problem handler, the heartbeat. */
class OfflineLockWebTest {

    private JdbcLockManager locks;
    private MockMvc mvc;
    private MockMvc mvcWithView;

    @Controller
    class EditController {
        @PostMapping("/orders/{n}/save")
        @ResponseBody
        String save(@PathVariable String n, @RequestParam LockId lockId, @RequestParam String user) {
            locks.checkLock(lockId, "purchase_order", n, user);
            return "saved";
        }

        @PostMapping("/orders/{n}/edit")
        @ResponseBody
        String edit(@PathVariable String n, @RequestParam String user) {
            return locks.tryLock("purchase_order", n, user).getValue();
        }

        @PostMapping("/orders/{n}/heartbeat")
        ResponseEntity<?> heartbeat(
                @PathVariable String n, @RequestParam(required = false) String lockId, @RequestParam String user) {
            return heartbeatHelper.extend(lockId, "purchase_order", n, user);
        }

        @PostMapping("/orders/{n}/heartbeat-shown")
        ResponseEntity<?> heartbeatShown(
                @PathVariable String n, @RequestParam(required = false) String lockId, @RequestParam String user) {
            return heartbeatHelper.extend(lockId, "purchase_order", n, user, at -> "shown " + at.getEpochSecond());
        }

        /** Shown times with a hover title, except for user "utc-viewer" (whose times need none). */
        @PostMapping("/orders/{n}/heartbeat-titled")
        ResponseEntity<?> heartbeatTitled(
                @PathVariable String n, @RequestParam(required = false) String lockId, @RequestParam String user) {
            return heartbeatHelper.extend(
                    lockId,
                    "purchase_order",
                    n,
                    user,
                    at -> "shown " + at.getEpochSecond(),
                    at -> user.equals("utc-viewer") ? null : "title " + at.getEpochSecond());
        }
    }

    private LockHeartbeat heartbeatHelper;
    private JdbcDataSource ds;

    @BeforeEach
    void setUp() {
        ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:web-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        new SchemaInstaller(ds).install(HoldfastTable.OFFLINE_LOCKS);
        locks = JdbcLockManager.builder(ds)
                .ownerBinding(true)
                .defaultExpiry(Duration.ofSeconds(30))
                .build();
        heartbeatHelper = new LockHeartbeat(locks, locks, ds, Duration.ofSeconds(10));
        FormattingConversionService conversion = new FormattingConversionService();
        conversion.addConverter(new LockIdConverter());
        mvc = MockMvcBuilders.standaloneSetup(new EditController())
                .setConversionService(conversion)
                .setControllerAdvice(new OfflineLockExceptionHandler(null))
                .build();
        mvcWithView = MockMvcBuilders.standaloneSetup(new EditController())
                .setConversionService(conversion)
                .setControllerAdvice(new OfflineLockExceptionHandler("lock-problem"))
                .build();
    }

    private String lock(String order, String user) throws Exception {
        return mvc.perform(post("/orders/" + order + "/edit").param("user", user))
                .andReturn()
                .getResponse()
                .getContentAsString();
    }

    @Test
    void aLiveLockOfTheUserForTheOrderSaves() throws Exception {
        String id = lock("A", "kim");
        mvc.perform(post("/orders/A/save").param("lockId", id).param("user", "kim"))
                .andExpect(status().isOk())
                .andExpect(content().string("saved"));
    }

    @Test
    void malformedOrMissingLockIdsAre400NeverA500() throws Exception {
        mvc.perform(post("/orders/A/save").param("lockId", "not-a-lock-id").param("user", "kim"))
                .andExpect(status().isBadRequest())
                .andExpect(content().contentTypeCompatibleWith("text/html"))
                .andExpect(content().string(org.hamcrest.Matchers.containsString("damaged lock")));
        mvc.perform(post("/orders/A/save").param("user", "kim"))
                .andExpect(status().isBadRequest())
                .andExpect(content().string(org.hamcrest.Matchers.containsString("carried no lock")));
        mvc.perform(post("/orders/A/save")
                        .param("lockId", "<script>x</script>")
                        .param("user", "kim")
                        .header("Accept", "application/json"))
                .andExpect(status().isBadRequest())
                .andExpect(content().contentTypeCompatibleWith("application/problem+json"))
                .andExpect(jsonPath("$.code").value("bad-lock-id"));
    }

    @Test
    void conflictsAre409PagesOrProblemDetails() throws Exception {
        String kims = lock("A", "kim");
        String other = lock("B", "kim");
        // someone else opens A: who and until when, as JSON
        mvc.perform(post("/orders/A/edit").param("user", "admin").header("Accept", "application/json"))
                .andExpect(status().isConflict())
                .andExpect(content().contentTypeCompatibleWith("application/problem+json"))
                .andExpect(jsonPath("$.status").value(409))
                .andExpect(jsonPath("$.code").value("already-locked"))
                .andExpect(jsonPath("$.owner").value("kim"))
                .andExpect(jsonPath("$.expiresAt").isString());
        // kim's lock presented by admin; B's lock presented for A; a forged one: refused as pages
        mvc.perform(post("/orders/A/save").param("lockId", kims).param("user", "admin"))
                .andExpect(status().isConflict())
                .andExpect(content().string(org.hamcrest.Matchers.containsString("Not your lock")));
        mvc.perform(post("/orders/A/save").param("lockId", other).param("user", "kim"))
                .andExpect(status().isConflict())
                .andExpect(content().string(org.hamcrest.Matchers.containsString("something else")));
        mvc.perform(post("/orders/A/save")
                        .param("lockId", LockId.parse("AAAAAAAAAAAAAAAAAAAAAA").getValue())
                        .param("user", "kim"))
                .andExpect(status().isConflict())
                .andExpect(content().string(org.hamcrest.Matchers.containsString("no longer hold")));
        // with a configured view, the page gets the problem as model attribute
        var result = mvcWithView
                .perform(post("/orders/A/edit").param("user", "admin"))
                .andExpect(status().isConflict())
                .andExpect(view().name("lock-problem"))
                .andReturn();
        LockProblem problem = (LockProblem) result.getModelAndView().getModel().get("lockProblem");
        assertThat(problem.owner()).isEqualTo("kim");
        assertThat(problem.code()).isEqualTo("already-locked");
        assertThat(locks.holder("purchase_order", "A").orElseThrow().owner()).isEqualTo("kim");
    }

    @Test
    void aBeatWithADisplayFunctionAddsTheExpiryAsThePageShowsIt() throws Exception {
        String id = lock("C", "kim");
        mvc.perform(post("/orders/C/heartbeat").param("lockId", id).param("user", "kim"))
                .andExpect(status().isOk())
                .andExpect(jsonPath("$.expiresAtText").doesNotExist());
        mvc.perform(post("/orders/C/heartbeat-shown").param("lockId", id).param("user", "kim"))
                .andExpect(status().isOk())
                .andExpect(jsonPath("$.held").value(true));
        String shown = com.jayway.jsonpath.JsonPath.read(
                mvc.perform(post("/orders/C/heartbeat-shown")
                                .param("lockId", id)
                                .param("user", "kim"))
                        .andExpect(status().isOk())
                        .andReturn()
                        .getResponse()
                        .getContentAsString(),
                "$.expiresAtText");
        var expires = locks.holder("purchase_order", "C").orElseThrow().expiresAt();
        assertThat(shown).isEqualTo("shown " + expires.getEpochSecond()); // the display function got the new expiry
        // a refused beat carries no display text
        mvc.perform(post("/orders/C/heartbeat-shown").param("lockId", id).param("user", "admin"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.expiresAtText").doesNotExist());
    }

    @Test
    void aBeatWithATitleFunctionAddsTheHoverTitlesOfTheTimesItShows() throws Exception {
        String id = lock("D", "kim");
        String answer = mvc.perform(
                        post("/orders/D/heartbeat-titled").param("lockId", id).param("user", "kim"))
                .andExpect(status().isOk())
                .andReturn()
                .getResponse()
                .getContentAsString();
        var expires = locks.holder("purchase_order", "D").orElseThrow().expiresAt();
        assertThat(com.jayway.jsonpath.JsonPath.<String>read(answer, "$.expiresAtText"))
                .isEqualTo("shown " + expires.getEpochSecond());
        assertThat(com.jayway.jsonpath.JsonPath.<String>read(answer, "$.expiresAtTitle"))
                .isEqualTo("title " + expires.getEpochSecond());
        // a title function answering null: no title
        String utcs = lock("E", "utc-viewer");
        mvc.perform(post("/orders/E/heartbeat-titled").param("lockId", utcs).param("user", "utc-viewer"))
                .andExpect(status().isOk())
                .andExpect(jsonPath("$.expiresAtText").isString())
                .andExpect(jsonPath("$.expiresAtTitle").doesNotExist());
        // a lock that ended: when, as the page shows it and with its title; no expiry
        assertThat(locks.forceRelease("purchase_order", "D", "root")).isTrue();
        String refused = mvc.perform(
                        post("/orders/D/heartbeat-titled").param("lockId", id).param("user", "kim"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.code").value("lock-broken"))
                .andExpect(jsonPath("$.expiresAtText").doesNotExist())
                .andExpect(jsonPath("$.expiresAtTitle").doesNotExist())
                .andReturn()
                .getResponse()
                .getContentAsString();
        long ended = java.time.Instant.parse(com.jayway.jsonpath.JsonPath.<String>read(refused, "$.endedAt"))
                .getEpochSecond();
        assertThat(com.jayway.jsonpath.JsonPath.<String>read(refused, "$.endedAtText"))
                .isEqualTo("shown " + ended);
        assertThat(com.jayway.jsonpath.JsonPath.<String>read(refused, "$.endedAtTitle"))
                .isEqualTo("title " + ended);
        // without a display function, no texts of times
        mvc.perform(post("/orders/D/heartbeat").param("lockId", id).param("user", "kim"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.endedAt").isString())
                .andExpect(jsonPath("$.endedAtText").doesNotExist())
                .andExpect(jsonPath("$.endedAtTitle").doesNotExist());
    }

    @Test
    void heartbeatExtendsTheHoldersLockAndReportsALostOne() throws Exception {
        String id = lock("A", "kim");
        var before = locks.holder("purchase_order", "A").orElseThrow().expiresAt();
        mvc.perform(post("/orders/A/heartbeat").param("lockId", id).param("user", "kim"))
                .andExpect(status().isOk())
                .andExpect(jsonPath("$.held").value(true))
                .andExpect(jsonPath("$.intervalSeconds").value(10))
                .andExpect(jsonPath("$.secondsLeft").value(org.hamcrest.Matchers.greaterThan(30)));
        assertThat(locks.holder("purchase_order", "A").orElseThrow().expiresAt())
                .isAfter(before.plusSeconds(9));
        // another user's heartbeat with kim's lock id, or kim's for another order: lost, nothing extended
        var extended = locks.holder("purchase_order", "A").orElseThrow().expiresAt();
        mvc.perform(post("/orders/A/heartbeat").param("lockId", id).param("user", "admin"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.held").value(false))
                .andExpect(jsonPath("$.code").value("other-owner"));
        mvc.perform(post("/orders/B/heartbeat").param("lockId", id).param("user", "kim"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.code").value("other-resource"));
        mvc.perform(post("/orders/A/heartbeat").param("lockId", "garbage").param("user", "kim"))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.code").value("bad-lock-id"));
        assertThat(locks.holder("purchase_order", "A").orElseThrow().expiresAt())
                .isEqualTo(extended);
        // broken by an operator: the next beat says the lock is lost
        assertThat(locks.forceRelease("purchase_order", "A", "root")).isTrue();
        mvc.perform(post("/orders/A/heartbeat").param("lockId", id).param("user", "kim"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.held").value(false))
                .andExpect(jsonPath("$.code").value("lock-broken"))
                .andExpect(jsonPath("$.endedBy").value("root"))
                .andExpect(jsonPath("$.endedAt").isString());
        // someone else takes it: a save with the broken lock says who broke it and who holds it now
        lock("A", "lee");
        mvc.perform(post("/orders/A/save")
                        .param("lockId", id)
                        .param("user", "kim")
                        .header("Accept", "application/json"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.code").value("lock-broken"))
                .andExpect(jsonPath("$.endedBy").value("root"))
                .andExpect(jsonPath("$.owner").value("lee"))
                .andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("root broke your lock")));
    }

    @Test
    void aLockBrokenBetweenTheBeatsExtensionAndItsReadIsReportedAsBroken() throws Exception {
        String id = lock("F", "kim");
        // The operator breaks the lock right after the beat extended it, before the beat reads its expiry.
        dev.holdfast.pessimistic.offline.LockManager breaksAfterExtending =
                (dev.holdfast.pessimistic.offline.LockManager) java.lang.reflect.Proxy.newProxyInstance(
                        getClass().getClassLoader(),
                        new Class<?>[] {dev.holdfast.pessimistic.offline.LockManager.class},
                        (proxy, method, args) -> {
                            Object result;
                            try {
                                result = method.invoke(locks, args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                throw e.getCause();
                            }
                            if (method.getName().equals("extendLockExpiration")) {
                                assertThat(locks.forceRelease("purchase_order", "F", "root"))
                                        .isTrue();
                            }
                            return result;
                        });
        heartbeatHelper = new LockHeartbeat(breaksAfterExtending, locks, ds, Duration.ofSeconds(10));
        mvc.perform(post("/orders/F/heartbeat").param("lockId", id).param("user", "kim"))
                .andExpect(status().isConflict())
                .andExpect(jsonPath("$.held").value(false))
                .andExpect(jsonPath("$.code").value("lock-broken"))
                .andExpect(jsonPath("$.endedBy").value("root"));
        assertThat(locks.holder("purchase_order", "F")).isEmpty();
    }
}
