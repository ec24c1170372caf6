import Reconciler
import RetentionMessagingModels
import Testing
import Views

@Suite("Room for pull-request submissions")
struct SubmissionHeadroomTests {
    @Test("a submission that leaves the reserve free goes ahead")
    func roomLeft() {
        let headroom = SubmissionHeadroom(environment: .production, existingMessages: 1_780, existingImages: 40,
                                          uploadingMessages: 20, uploadingImages: 2)
        #expect(headroom.allowed)
        #expect(SubmissionView.refusal(headroom) == nil)
    }

    @Test("a submission that would eat into the reserve is refused with the numbers")
    func nearTheCap() {
        let headroom = SubmissionHeadroom(environment: .production, existingMessages: 1_790, existingImages: 1_900,
                                          uploadingMessages: 25, uploadingImages: 0)
        #expect(!headroom.allowed)
        #expect(SubmissionView.refusal(headroom) == "not submitting: 1790 messages in production + 25 to upload = 1815, more than 1800 "
                + "(Apple's cap of 2000 less 200 kept free for the main branch); prune what abandoned pull requests left "
                + "(apply --prune --prune-grace DAYS on the main branch), then push again")
    }
}
