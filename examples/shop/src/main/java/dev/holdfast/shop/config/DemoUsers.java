package dev.holdfast.shop.config;

import java.util.List;

/** The demo accounts, created on every start; also listed on the login page and in the README. */
public final class DemoUsers {

    /** A demo account. */
    public record DemoUser(String username, String password, String role) {}

    public static final List<DemoUser> ALL = List.of(
            new DemoUser("alice", "alice-pw", "CUSTOMER"),
            new DemoUser("bob", "bob-pw", "CUSTOMER"),
            new DemoUser("admin", "admin-pw", "ADMIN"),
            new DemoUser("kim", "kim-pw", "ADMIN"));

    private DemoUsers() {}
}
