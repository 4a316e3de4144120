package dev.holdfast.shop.web;

import dev.holdfast.offline.HeldLock;
import dev.holdfast.offline.JdbcLockManager;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

import java.security.Principal;
import java.util.List;
import java.util.Optional;

/**
 * Scenario 6 (offline lock part): every live offline lock, with a button that breaks it. ADMIN only
 * (SecurityConfiguration), CSRF-protected like every POST. The operator view never shows lock ids.
 */
@Controller
@RequestMapping("/admin/locks")
class AdminLocksController {

    /** More than an admin can read; the page says when the list is cut. */
    static final int MAX_SHOWN = 500;

    private final JdbcLockManager locks;

    AdminLocksController(JdbcLockManager locks) {
        this.locks = locks;
    }

    @GetMapping
    String list(Model model) {
        List<HeldLock> held = locks.heldLocks(null, null, MAX_SHOWN);
        model.addAttribute("locks", held);
        model.addAttribute("cut", held.size() == MAX_SHOWN);
        // LEASES (issue 5): the lead adds the lease list (name, owner, since, expires, fencing token) here.
        return "admin-locks";
    }

    @PostMapping("/break")
    String breakLock(@RequestParam(required = false) String type, @RequestParam(required = false) String id,
                     Principal admin, RedirectAttributes redirect) {
        if (type == null || id == null || type.isBlank() || id.isBlank()) {
            throw new BadRequestException("The form did not say which lock to break. Nothing was changed.");
        }
        Optional<HeldLock> holder;
        try {
            holder = locks.holder(type, id);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("'" + type + "/" + id + "' cannot be a lock. Nothing was changed.");
        }
        boolean broken = locks.forceRelease(type, id);
        redirect.addFlashAttribute("notice", broken
                ? "The lock on " + type + " " + id + holder.map(h -> " held by " + h.owner()).orElse("")
                  + " was broken by " + admin.getName() + "; its holder can no longer save with it."
                : "There was no live lock on " + type + " " + id + " to break.");
        return "redirect:/admin/locks";
    }
}
